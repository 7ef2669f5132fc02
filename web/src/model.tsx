// A model's own page (/console/models/{id}): its endpoint kind, prices (cached input, and cache
// writes, audio and long-context tiers when configured), limits, modalities and
// TEE/ZDR, and a ready-to-paste request for curl, Python and Node (the OpenAI SDKs) against this
// gateway's base URL, with $TOLLGATE_API_KEY standing for the key (never a real one), and a copy
// button.
import { useEffect, useState } from 'preact/hooks';
import { listModels, type Model } from './api';
import { count, perUnit } from './format';
import { Loading, useLoad } from './load';
import { Tiers, otherPrices, perMillion } from './prices';
const TABS = ['curl', 'Python', 'Node'] as const;
type Tab = (typeof TABS)[number];

export const MODEL_PREFIX = '/console/models/';

/** The path of `id`'s page. */
export const modelPath = (id: string) => `${MODEL_PREFIX}${encodeURIComponent(id)}`;

export function ModelPage({ id, onBack }: { id: string; onBack: (e: MouseEvent) => void }) {
  // The model, or undefined when the gateway has none of that id.
  const loaded = useLoad(() => listModels().then((r) => ({ model: r.data.find((m) => m.id === id) })), [id]);
  const model = loaded.data?.model;

  useEffect(() => {
    if (model) document.title = `${model.id} · Models · Tollgate`;
  }, [model]);

  return (
    <>
      <p class="small">
        <a href="/console/models" onClick={onBack}>
          ← All models
        </a>
      </p>
      <h1>
        Model <code>{id}</code>
      </h1>
      <Loading state={loaded} what="the model">
        {({ model }) =>
          model ? (
            <>
              <Details m={model} />
              {(model.price_tiers ?? []).length > 0 && <Tiers tiers={model.price_tiers ?? []} />}
              <Snippet m={model} />
            </>
          ) : (
            <p role="alert" class="error">
              This gateway has no model named “{id}”.
            </p>
          )
        }
      </Loading>
    </>
  );
}

function Details({ m }: { m: Model }) {
  const audio = m.endpoint === 'transcription';
  const list = (xs: string[]) => (xs.length ? xs.join(', ') : '—');
  return (
    <section aria-labelledby="details-title" class="section">
      <h2 id="details-title">Details</h2>
      {m.display_name !== m.id && <p>{m.display_name}</p>}
      <dl class="stats details" data-model-details>
        <div>
          <dt>Endpoint</dt>
          <dd>{m.endpoint}</dd>
        </div>
        <div>
          <dt>Owned by</dt>
          <dd>{m.owned_by || '—'}</dd>
        </div>
        {audio ? (
          <div>
            <dt>Audio</dt>
            <dd>{perUnit(m.cost_per_audio_second, 60)} / min</dd>
          </div>
        ) : (
          <>
            <div>
              <dt>Input / 1M tokens</dt>
              <dd>{perMillion(m.input_cost_per_token)}</dd>
            </div>
            <div>
              <dt>Cached input / 1M tokens</dt>
              <dd data-cached-price>{perMillion(m.cached_input_cost_per_token)}</dd>
            </div>
            <div>
              <dt>Output / 1M tokens</dt>
              <dd>{perMillion(m.output_cost_per_token)}</dd>
            </div>
            {otherPrices(m).map(([label, price]) => (
              <div key={label}>
                <dt>{label} / 1M tokens</dt>
                <dd>{price}</dd>
              </div>
            ))}
          </>
        )}
        <div>
          <dt>Context</dt>
          <dd>{count(m.max_input_tokens || null)}</dd>
        </div>
        <div>
          <dt>Max output</dt>
          <dd>{count(m.max_output_tokens || null)}</dd>
        </div>
        <div>
          <dt>Input</dt>
          <dd>{list(m.input_modalities ?? [])}</dd>
        </div>
        <div>
          <dt>Output</dt>
          <dd>{list(m.output_modalities ?? [])}</dd>
        </div>
        <div>
          <dt>Security</dt>
          <dd>
            {m.tee && <span class="badge tee">TEE</span>}
            {m.zdr && <span class="badge zdr">ZDR</span>}
            {!m.tee && !m.zdr && <span class="muted">none</span>}
          </dd>
        </div>
      </dl>
      <p class="muted small">
        Prices in US dollars. TEE: served from a trusted execution environment. ZDR: the provider retains no data.
      </p>
    </section>
  );
}

/** The request `m`'s endpoint takes, in each language, against `base` (…/v1). */
export function snippets(m: Model, base: string): Record<Tab, string> {
  const id = JSON.stringify(m.id);
  const auth = '-H "Authorization: Bearer $TOLLGATE_API_KEY"';
  const client = {
    Python: `import os\nfrom openai import OpenAI\n\nclient = OpenAI(base_url="${base}", api_key=os.environ["TOLLGATE_API_KEY"])\n`,
    Node: `import OpenAI from 'openai';\n\nconst client = new OpenAI({ baseURL: '${base}', apiKey: process.env.TOLLGATE_API_KEY });\n`,
  };
  const json = (body: unknown) => JSON.stringify(body, null, 2);
  const curlJson = (path: string, body: unknown) =>
    `curl ${base}${path} \\\n  ${auth} \\\n  -H "Content-Type: application/json" \\\n  -d '${json(body).replace(/'/g, "'\\''")}'`;
  switch (m.endpoint) {
    case 'embedding': {
      const body = { model: m.id, input: 'The quick brown fox' };
      return {
        curl: curlJson('/embeddings', body),
        Python: `${client.Python}r = client.embeddings.create(model=${id}, input="The quick brown fox")\nprint(len(r.data[0].embedding))`,
        Node: `${client.Node}const r = await client.embeddings.create(${json(body)});\nconsole.log(r.data[0].embedding.length);`,
      };
    }
    case 'rerank': {
      const body = { model: m.id, query: 'What is a toll gate?', documents: ['A gate where a toll is paid.', 'A kind of bird.'] };
      return {
        curl: curlJson('/rerank', body),
        Python: `${client.Python}r = client.post("/rerank", body=${json(body)}, cast_to=object)\nprint(r)`,
        Node: `${client.Node}const r = await client.post('/rerank', { body: ${json(body).replace(/\n/g, '\n  ')} });\nconsole.log(r);`,
      };
    }
    case 'transcription':
      return {
        curl: `curl ${base}/audio/transcriptions \\\n  ${auth} \\\n  -F model=${m.id} \\\n  -F file=@speech.mp3`,
        Python: `${client.Python}with open("speech.mp3", "rb") as f:\n    r = client.audio.transcriptions.create(model=${id}, file=f)\nprint(r.text)`,
        Node: `import fs from 'node:fs';\n${client.Node}const r = await client.audio.transcriptions.create({ model: ${id.replace(/"/g, "'")}, file: fs.createReadStream('speech.mp3') });\nconsole.log(r.text);`,
      };
    default: {
      const body = { model: m.id, messages: [{ role: 'user', content: 'Hello!' }] };
      return {
        curl: curlJson('/chat/completions', body),
        Python: `${client.Python}r = client.chat.completions.create(\n    model=${id},\n    messages=[{"role": "user", "content": "Hello!"}],\n)\nprint(r.choices[0].message.content)`,
        Node: `${client.Node}const r = await client.chat.completions.create(${json(body)});\nconsole.log(r.choices[0].message.content);`,
      };
    }
  }
}

function Snippet({ m }: { m: Model }) {
  const [tab, setTab] = useState<Tab>('curl');
  const [copied, setCopied] = useState<Tab | null>(null);
  const text = snippets(m, `${location.origin}/v1`)[tab];
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(tab);
    } catch {
      setCopied(null);
    }
  };
  return (
    <section aria-labelledby="snippet-title" class="section">
      <h2 id="snippet-title">Use it</h2>
      <p>
        Set <code>TOLLGATE_API_KEY</code> to one of your team's API keys (the Keys page makes one), then:
      </p>
      <div class="row spread">
        <div class="row" role="group" aria-label="Language">
          {TABS.map((t) => (
            <button
              key={t}
              type="button"
              class={t === tab ? 'small' : 'small quiet'}
              aria-pressed={t === tab}
              onClick={() => {
                setTab(t);
                setCopied(null);
              }}
            >
              {t}
            </button>
          ))}
        </div>
        <button type="button" class="small quiet" onClick={copy}>
          {copied === tab ? 'Copied' : 'Copy'}
        </button>
      </div>
      <pre class="code" tabIndex={0} aria-label={`${tab} code`} data-snippet>
        <code>{text}</code>
      </pre>
      <p aria-live="polite" class="muted">
        {copied === tab ? `The ${tab} code is on the clipboard.` : ''}
      </p>
    </section>
  );
}
