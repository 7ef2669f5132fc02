// The playground: a chat model or a function, a system prompt, a conversation, temperature and
// max_tokens; the answer streamed as it arrives (the console's POST …/chat/completions, which is
// /v1/chat/completions billed to the team and tagged playground), a stop button, and after each
// run its tokens (with their kinds: cached, written to the cache, reasoning, audio), cost and
// latency. A stopped run keeps its partial answer in the conversation and shows the cost billed
// for it, read from its spend row (billed_run.ts). "View code" shows the same request for curl,
// Python and Node.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, listFunctions, listModels, playgroundFetch, type Team, type TokenKinds } from './api';
import { billedRun, refusalText, tokensText, usageKinds } from './billed_run';
import { money, shownName } from './format';
import { Failed, useLoad } from './load';

interface Message {
  role: 'user' | 'assistant';
  content: string;
}

interface RunStats extends TokenKinds {
  prompt_tokens: number;
  completion_tokens: number;
  cost: number | null;
  ms: number;
  firstTokenMs: number | null;
}

interface Choice {
  value: string;
  label: string;
}

const FUNCTION_PREFIX = 'tollgate::function_name::';

/** The chat models and functions to choose from. */
async function loadChoices(): Promise<{ models: Choice[]; functions: Choice[] }> {
  const [ms, fs] = await Promise.all([listModels(), listFunctions().catch(() => ({ data: [] }))]);
  const models = ms.data
    .filter((m) => m.endpoint === 'chat')
    .map((m) => ({ value: m.id, label: m.display_name && m.display_name !== m.id ? `${m.id} (${m.display_name})` : m.id }));
  const functions = fs.data.map((f) => ({ value: `${FUNCTION_PREFIX}${f.name}`, label: f.name }));
  return { models, functions };
}

export function PlaygroundPage({ team }: { team: Team }) {
  const loaded = useLoad(loadChoices, []);
  const choices = loaded.data;
  const [model, setModel] = useState('');
  const [system, setSystem] = useState('');
  const [history, setHistory] = useState<Message[]>([]);
  const [input, setInput] = useState('');
  const [temperature, setTemperature] = useState('1');
  const [maxTokens, setMaxTokens] = useState('256');
  const [output, setOutput] = useState('');
  const [running, setRunning] = useState(false);
  const [stats, setStats] = useState<RunStats | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [showCode, setShowCode] = useState(false);
  // The request last run: what "view code" shows until a new message is typed (then, what Run
  // would send).
  const [lastRun, setLastRun] = useState<Record<string, unknown> | null>(null);
  const abort = useRef<AbortController | null>(null);
  // Counts runs: a cost looked up late is shown only while its run is still the last.
  const runs = useRef(0);

  useEffect(() => {
    if (choices) setModel((cur) => cur || choices.models[0]?.value || choices.functions[0]?.value || '');
  }, [choices]);
  useEffect(() => () => abort.current?.abort(), []);

  const messages = (): { role: string; content: string }[] => [
    ...(system.trim() ? [{ role: 'system', content: system }] : []),
    ...history,
    ...(input.trim() ? [{ role: 'user', content: input }] : []),
  ];
  const request = () => {
    const body: Record<string, unknown> = { model, messages: messages(), stream: true };
    const t = Number(temperature);
    if (temperature.trim() !== '' && Number.isFinite(t)) body.temperature = t;
    const n = Number(maxTokens);
    if (maxTokens.trim() !== '' && Number.isInteger(n) && n > 0) body.max_tokens = n;
    return body;
  };

  const run = async (e: Event) => {
    e.preventDefault();
    if (running || !model || !input.trim()) return;
    const body = { ...request(), stream_options: { include_usage: true } };
    setLastRun(request());
    const asked: Message = { role: 'user', content: input };
    const controller = new AbortController();
    abort.current = controller;
    setRunning(true);
    setError(null);
    setStats(null);
    setOutput('');
    const started = performance.now();
    let firstTokenMs: number | null = null;
    let text = '';
    let usage: Record<string, any> | null = null;
    const thisRun = ++runs.current;
    let requestId: string | null = null;
    let stopped = false;
    let failed = false;
    try {
      const r = await playgroundFetch(team.id, body, controller.signal);
      // A run refused is not billed: only an accepted one has a spend row to look for.
      if (r.ok) requestId = r.headers.get('x-request-id');
      if (!r.ok || !r.body) {
        const data = await r.json().catch(() => null);
        throw new ApiError(r.status, data?.error?.message ?? `HTTP ${r.status}`, data?.error?.code ?? null);
      }
      await readEvents(r.body, (event) => {
        if (event.error) throw new Error(event.error.message ?? 'the stream ended with an error');
        const delta = event.choices?.[0]?.delta?.content;
        if (typeof delta === 'string' && delta !== '') {
          if (firstTokenMs === null) firstTokenMs = performance.now() - started;
          text += delta;
          setOutput(text);
        }
        if (event.usage) usage = event.usage;
      });
    } catch (err) {
      failed = true;
      stopped = (err as Error).name === 'AbortError';
      if (stopped) setError('Stopped.');
      else if (err instanceof ApiError && err.code === 'insufficient_balance') setError(await refusalText(team));
      else setError((err as Error).message);
    }
    // The conversation keeps the answer, and the part of one that was stopped.
    if (!failed || (stopped && text !== '')) {
      setHistory((h) => [...h, asked, { role: 'assistant', content: text }]);
      setInput('');
    }
    const u = usage as Record<string, any> | null;
    const stats: RunStats = {
      ...usageKinds(u),
      prompt_tokens: u?.prompt_tokens ?? 0,
      completion_tokens: u?.completion_tokens ?? 0,
      cost: u ? (u['tollgate::cost'] ?? null) : null,
      ms: performance.now() - started,
      firstTokenMs,
    };
    setStats(stats);
    setRunning(false);
    abort.current = null;
    // A run cut short has no usage in its stream: what it was billed is in its spend row.
    if (stats.cost === null && requestId) {
      const billed = await billedRun(team.id, requestId);
      if (billed && runs.current === thisRun) setStats({ ...stats, ...billed });
    }
  };

  // The last answer shows under Output, not twice.
  const earlier = output && history[history.length - 1]?.role === 'assistant' ? history.slice(0, -1) : history;

  if (team.state !== 'active') {
    return (
      <>
        <h1>Playground</h1>
        <p>Team {shownName(team.name)} is {team.state}: the playground is not available.</p>
      </>
    );
  }

  return (
    <>
      <h1>Playground</h1>
      <p class="muted">
        Runs are billed to team <strong>{shownName(team.name)}</strong> and tagged <code>playground</code>.
      </p>
      <form class="playground" onSubmit={run}>
        <div class="settings">
          <div class="field">
            <label for="pg-model">Model</label>
            <select id="pg-model" value={model} onChange={(e) => setModel((e.target as HTMLSelectElement).value)} disabled={!choices}>
              {choices && choices.models.length > 0 && (
                <optgroup label="Chat models">
                  {choices.models.map((c) => (
                    <option key={c.value} value={c.value}>
                      {c.label}
                    </option>
                  ))}
                </optgroup>
              )}
              {choices && choices.functions.length > 0 && (
                <optgroup label="Functions">
                  {choices.functions.map((c) => (
                    <option key={c.value} value={c.value}>
                      {c.label}
                    </option>
                  ))}
                </optgroup>
              )}
            </select>
          </div>
          <div class="field">
            <label for="pg-temperature">Temperature</label>
            <input id="pg-temperature"
              type="number"
              min={0}
              max={2}
              step={0.1}
              value={temperature}
              onInput={(e) => setTemperature((e.target as HTMLInputElement).value)}
            />
          </div>
          <div class="field">
            <label for="pg-max-tokens">Max tokens</label>
            <input id="pg-max-tokens"
              type="number"
              min={1}
              step={1}
              value={maxTokens}
              onInput={(e) => setMaxTokens((e.target as HTMLInputElement).value)}
            />
          </div>
        </div>
        {loaded.error !== null && <Failed what="the models" error={loaded.error} onRetry={loaded.reload} />}
        <div class="field">
          <label for="pg-system">System prompt</label>
          <textarea id="pg-system" rows={2} value={system} onInput={(e) => setSystem((e.target as HTMLTextAreaElement).value)} />
        </div>
        {earlier.length > 0 && (
          <ol class="conversation" aria-label="Conversation">
            {earlier.map((m, i) => (
              <li key={i} class={`msg msg-${m.role}`}>
                <span class="who-said">{m.role === 'user' ? 'You' : 'Assistant'}</span>
                <p>{m.content}</p>
              </li>
            ))}
          </ol>
        )}
        <div class="field">
          <label for="pg-message">{history.length > 0 ? 'Your next message' : 'Your message'}</label>
          <textarea id="pg-message" rows={4} required value={input} onInput={(e) => setInput((e.target as HTMLTextAreaElement).value)} />
        </div>
        <div class="row">
          <button type="submit" disabled={running || !model || !input.trim()}>
            Run
          </button>
          <button type="button" class="danger" disabled={!running} onClick={() => abort.current?.abort()}>
            Stop
          </button>
          <button type="button" class="quiet" disabled={running || history.length === 0} onClick={() => setHistory([])}>
            Clear conversation
          </button>
          <button type="button" class="quiet" aria-expanded={showCode} onClick={() => setShowCode(!showCode)}>
            {showCode ? 'Hide code' : 'View code'}
          </button>
        </div>
      </form>
      <section aria-labelledby="output-title" class="section">
        <h2 id="output-title">Output</h2>
        <div class="output" data-output aria-live="polite" aria-busy={running}>
          {output || <span class="muted">{running ? 'Waiting for the first token…' : 'Nothing yet.'}</span>}
        </div>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        {stats && (
          <dl class="stats" data-stats>
            <div>
              <dt>Tokens</dt>
              <dd data-tokens>{tokensText(stats)}</dd>
            </div>
            <div>
              <dt>Cost</dt>
              <dd data-cost>{stats.cost === null ? '—' : money(stats.cost)}</dd>
            </div>
            <div>
              <dt>Latency</dt>
              <dd>
                {Math.round(stats.ms)} ms
                {stats.firstTokenMs !== null && <> (first token {Math.round(stats.firstTokenMs)} ms)</>}
              </dd>
            </div>
          </dl>
        )}
      </section>
      {showCode && <Code body={input.trim() || !lastRun ? request() : lastRun} />}
    </>
  );
}

/** Reads a server-sent event stream, calling `onEvent` with each data line's JSON until [DONE]. */
async function readEvents(body: ReadableStream<Uint8Array>, onEvent: (event: any) => void) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      const data = block
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      if (data === '') continue;
      if (data === '[DONE]') {
        await reader.cancel().catch(() => undefined);
        return;
      }
      onEvent(JSON.parse(data));
    }
  }
}

const TABS = ['curl', 'Python', 'Node'] as const;

function Code({ body }: { body: Record<string, unknown> }) {
  const [tab, setTab] = useState<(typeof TABS)[number]>('curl');
  const base = `${location.origin}/v1`;
  const json = JSON.stringify(body, null, 2);
  const { model, messages, ...rest } = body;
  const py = Object.entries(rest)
    .map(([k, v]) => `    ${k}=${pyValue(v)},`)
    .join('\n');
  const text = {
    curl: `curl ${base}/chat/completions \\\n  -H "Authorization: Bearer $TOLLGATE_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '${json.replace(/'/g, "'\\''")}'`,
    Python: `import os\nfrom openai import OpenAI\n\nclient = OpenAI(base_url="${base}", api_key=os.environ["TOLLGATE_API_KEY"])\nstream = client.chat.completions.create(\n    model=${JSON.stringify(model)},\n    messages=${JSON.stringify(messages, null, 4).replace(/\n/g, '\n    ')},\n${py}\n)\nfor chunk in stream:\n    print(chunk.choices[0].delta.content or "", end="")`,
    Node: `import OpenAI from 'openai';\n\nconst client = new OpenAI({ baseURL: '${base}', apiKey: process.env.TOLLGATE_API_KEY });\nconst stream = await client.chat.completions.create(${json});\nfor await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? '');`,
  }[tab];
  return (
    <section aria-labelledby="code-title" class="section">
      <h2 id="code-title">The same request, with an API key</h2>
      <div class="row" role="group" aria-label="Language">
        {TABS.map((t) => (
          <button key={t} type="button" class={t === tab ? 'small' : 'small quiet'} aria-pressed={t === tab} onClick={() => setTab(t)}>
            {t}
          </button>
        ))}
      </div>
      <pre class="code" tabIndex={0} aria-label={`${tab} code`}>
        <code>{text}</code>
      </pre>
    </section>
  );
}

function pyValue(v: unknown): string {
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (v === null) return 'None';
  return JSON.stringify(v);
}
