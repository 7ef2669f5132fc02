// The team's usage: balance, reserved and available (GET team); spend per UTC day over a chosen
// range as a chart (SVG, no style attributes, so the strict CSP holds) and a table; totals by
// model, key (by name), tag (shares within each tag key) or user; the raw rows with filters and
// paging (next_cursor); the same rows as CSV. Money shows to the cent, its exact figure on hover.
// By model, the tokens show by kind: uncached input, cache reads, cache writes and output.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import {
  getTeam,
  listKeys,
  spendCsvUrl,
  spendRows,
  spendSummary,
  type Key,
  type SpendGroup,
  type SpendTotal,
  type Team,
  type TeamDetail,
  type TokenKinds,
} from './api';
import { cents, count, exactMoney, shownName, whenUtc, whenZoned } from './format';
import { Failed, Loading, useLoad } from './load';
import { Pager } from './pager';

const RANGES = [7, 30, 90] as const;
const GROUPS: { by: Exclude<SpendGroup, 'day'>; label: string }[] = [
  { by: 'model', label: 'Model' },
  { by: 'key', label: 'Key' },
  { by: 'tag', label: 'Tag' },
  { by: 'user', label: 'User' },
];

/** An amount to the cent, its exact figure (up to 12 decimals) on hover; a dash for none. */
function Money({ usd }: { usd: number | null | undefined }) {
  if (usd === null || usd === undefined) return <>—</>;
  return <span title={exactMoney(usd)}>{cents(usd)}</span>;
}

/** The team's keys by public id (empty until they arrive, or if they cannot be read). */
type KeyNames = Map<string, Key>;

/** A key as the pages show it: its name ("name (revoked)" once revoked), its public id on hover. */
function KeyName({ id, keys }: { id: string; keys: KeyNames }) {
  const k = keys.get(id);
  if (!k) return <code>{id}</code>;
  const revoked = k.state === 'revoked' || k.revoked_at !== null;
  return (
    <span title={`Key id ${id}`} data-key-id={id}>
      {shownName(k.name)}
      {revoked && ' (revoked)'}
    </span>
  );
}

/**
 * Whole percentages of `total` for each cost that sum to exactly 100 when the costs make up the
 * total (largest remainder: the floors, then one more point to the largest fractions).
 */
function percentages(costs: number[], total: number): number[] {
  if (!(total > 0)) return costs.map(() => 0);
  const raw = costs.map((c) => Math.max(0, (c / total) * 100));
  const out = raw.map(Math.floor);
  const want = Math.min(100, Math.round(raw.reduce((a, r) => a + r, 0)));
  let left = want - out.reduce((a, p) => a + p, 0);
  const order = raw.map((r, i) => ({ i, frac: r - Math.floor(r) })).sort((a, b) => b.frac - a.frac);
  for (const { i } of order) {
    if (left <= 0) break;
    out[i] += 1;
    left -= 1;
  }
  return out;
}

/** The UTC day `days` days before today, as YYYY-MM-DD. */
function daysAgo(days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
}

export function UsagePage({ team }: { team: Team }) {
  const [range, setRange] = useState<number>(30);
  const [by, setBy] = useState<Exclude<SpendGroup, 'day'>>('model');
  const [keys, setKeys] = useState<KeyNames>(new Map());
  const since = daysAgo(range - 1);
  const summary = useLoad<TeamDetail>(() => getTeam(team.id), [team.id]);
  const detail = summary.data;
  const daily = useLoad(() => spendSummary(team.id, 'day', since).then((r) => r.data), [team.id, since]);
  const breakdown = useLoad(() => spendSummary(team.id, by, since).then((r) => r.data), [team.id, by, since]);

  useEffect(() => {
    // Names for the key ids of the tables; without them (a role that may not list keys) ids show.
    listKeys(team.id).then(
      (list) => setKeys(new Map(list.map((k) => [k.public_id, k]))),
      () => setKeys(new Map()),
    );
  }, [team.id]);

  return (
    <>
      <h1>Usage</h1>
      {summary.error !== null && <Failed what="the balance" error={summary.error} onRetry={summary.reload} />}
      <dl class="stats balance" aria-label="Balance">
        <div>
          <dt>Balance</dt>
          <dd data-balance>{detail ? <Money usd={detail.balance} /> : '…'}</dd>
        </div>
        <div>
          <dt>Reserved</dt>
          <dd data-reserved>{detail ? <Money usd={detail.reserved} /> : '…'}</dd>
          <dd class="muted note">Held for requests in flight; returned or charged when they end.</dd>
        </div>
        <div>
          <dt>Available</dt>
          <dd data-available>{detail ? <Money usd={detail.available} /> : '…'}</dd>
        </div>
      </dl>
      <section aria-labelledby="daily-title" class="section">
        <div class="row spread">
          <h2 id="daily-title">Spend per day</h2>
          <div class="field inline">
            <label for="usage-range">Range</label>
            <select id="usage-range" value={range} onChange={(e) => setRange(Number((e.target as HTMLSelectElement).value))}>
              {RANGES.map((r) => (
                <option key={r} value={r}>
                  Last {r} days
                </option>
              ))}
            </select>
          </div>
        </div>
        <p class="muted small" data-utc-note>
          Days are UTC days (midnight to midnight UTC); request times below are in your time zone.
        </p>
        <Loading state={daily} what="the spend per day">
          {(daily) => (
            <>
              <DailyChart rows={daily} since={since} days={range} />
              <Totals
                items={daily.map((r) => ({ ...r, id: String(r.day), label: String(r.day) }))}
                by="day"
                label="Day (UTC)"
                title="Spend per UTC day"
              />
            </>
          )}
        </Loading>
      </section>
      <section aria-labelledby="by-title" class="section">
        <div class="row spread">
          <h2 id="by-title">Spend by {GROUPS.find((g) => g.by === by)?.label.toLowerCase()}</h2>
          <div class="row" role="group" aria-label="Group by">
            {GROUPS.map((g) => (
              <button
                key={g.by}
                type="button"
                class={g.by === by ? 'small' : 'small quiet'}
                aria-pressed={g.by === by}
                onClick={() => setBy(g.by)}
              >
                {g.label}
              </button>
            ))}
          </div>
        </div>
        <Loading state={breakdown} what={`the spend by ${by}`}>
          {(breakdown) =>
            by === 'tag' ? (
              <Loading state={daily} what="the spend per day">
                {(daily) => <TagTotals rows={breakdown} daily={daily} />}
              </Loading>
            ) : (
              <>
                <Totals
                  items={breakdown.map((r, i) => ({ ...r, id: String(i), label: groupLabel(by, r[by], keys) }))}
                  by={by}
                  label={GROUPS.find((g) => g.by === by)?.label ?? by}
                  title={`Spend by ${by}`}
                  columns={by === 'model' ? KIND_COLUMNS : undefined}
                />
                {by === 'model' && (
                  <p class="muted small">
                    Input tokens by kind: uncached, read from the provider's prompt cache (cached) and written to it
                    (written). Cost is per request, so one figure per model.
                  </p>
                )}
              </>
            )
          }
        </Loading>
      </section>
      <Rows team={team} since={since} keys={keys} />
    </>
  );
}

const CHART_W = 720;
const CHART_H = 160;

/** Spend per day as bars, one per day of the range (days without spend are empty). */
function DailyChart({ rows, since, days }: { rows: SpendTotal[]; since: string; days: number }) {
  const byDay = new Map(rows.map((r) => [String(r.day), r.cost]));
  const start = Date.parse(`${since}T00:00:00Z`);
  const series = Array.from({ length: days }, (_, i) => {
    const day = new Date(start + i * 86_400_000).toISOString().slice(0, 10);
    return { day, cost: byDay.get(day) ?? 0 };
  });
  const max = Math.max(...series.map((s) => s.cost), 0);
  const total = series.reduce((a, s) => a + s.cost, 0);
  const slot = CHART_W / days;
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${CHART_W} ${CHART_H + 1}`} role="img" aria-label={`Spend per UTC day since ${since}: ${cents(total)} in all`}>
        <line x1={0} y1={CHART_H} x2={CHART_W} y2={CHART_H} class="axis" />
        {series.map((s, i) => {
          const h = max > 0 ? (s.cost / max) * (CHART_H - 8) : 0;
          return (
            <rect key={s.day} x={i * slot + slot * 0.15} y={CHART_H - h} width={slot * 0.7} height={h} class="bar">
              <title>
                {s.day} (UTC): {exactMoney(s.cost)}
              </title>
            </rect>
          );
        })}
      </svg>
      <div class="ticks muted small" aria-hidden="true">
        <span>{series[0]?.day}</span>
        <span>{series[series.length - 1]?.day}</span>
      </div>
      <figcaption class="muted small">
        {max > 0 ? `Highest day ${cents(max)}; ${cents(total)} in all.` : 'No spend in this range.'}
      </figcaption>
    </figure>
  );
}

/** How a summary row's group shows: a key by name, none as a dash (playground runs have no key). */
function groupLabel(by: string, value: string | number | null, keys: KeyNames): ComponentChildren {
  if (value === null || value === '') return by === 'key' ? 'no key (playground)' : '—';
  if (by === 'key') return <KeyName id={String(value)} keys={keys} />;
  return String(value);
}

/** One row of a totals table; the kinds of its tokens when grouped by model. */
interface Item extends Partial<TokenKinds> {
  id: string;
  label: ComponentChildren;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  uncached_prompt_tokens?: number;
  cost: number;
}

/** A token column of a totals table: its heading, its cell's `data-col`, and the cell. */
interface Column {
  label: string;
  col: string;
  cell: (r: Item) => ComponentChildren;
}

/** A count and, when not zero, the part of it `what` is (e.g. "30 reasoning") on a line below. */
function WithPart({ n, part, what }: { n: number; part: number | undefined; what: string }) {
  return (
    <div>
      {count(n)}
      {part ? <div class="muted small" data-part>{`${count(part)} ${what}`}</div> : null}
    </div>
  );
}

const TOTAL_COLUMNS: Column[] = [
  { label: 'Prompt tokens', col: 'prompt', cell: (r) => count(r.prompt_tokens) },
  { label: 'Completion tokens', col: 'completion', cell: (r) => count(r.completion_tokens) },
];

/** The breakdown per model: the input by kind (the three sum to the prompt tokens), then the output. */
const KIND_COLUMNS: Column[] = [
  {
    label: 'Uncached input',
    col: 'uncached',
    cell: (r) => <WithPart n={r.uncached_prompt_tokens ?? r.prompt_tokens} part={r.audio_prompt_tokens} what="audio" />,
  },
  { label: 'Cached', col: 'cached', cell: (r) => count(r.cached_tokens ?? 0) },
  {
    label: 'Written',
    col: 'written',
    cell: (r) => <WithPart n={r.cache_write_tokens ?? 0} part={r.cache_write_1h_tokens} what="for 1 hour" />,
  },
  {
    label: 'Output',
    col: 'output',
    cell: (r) => <WithPart n={r.completion_tokens} part={r.reasoning_tokens} what="reasoning" />,
  },
];

/**
 * Totals by tag, a table per tag key: each value's cost over the range's total cost (the
 * summary by day), and the requests with no value for that key, so a key's shares sum to 100 %.
 * A request with two tags counts once under each of its keys.
 */
function TagTotals({ rows, daily }: { rows: SpendTotal[]; daily: SpendTotal[] }) {
  const all = daily.reduce(
    (a, r) => ({
      requests: a.requests + r.requests,
      prompt_tokens: a.prompt_tokens + r.prompt_tokens,
      completion_tokens: a.completion_tokens + r.completion_tokens,
      cost: a.cost + r.cost,
    }),
    { requests: 0, prompt_tokens: 0, completion_tokens: 0, cost: 0 },
  );
  const byKey = new Map<string, Item[]>();
  for (const r of rows) {
    const tag = String(r.tag ?? '');
    const eq = tag.indexOf('=');
    const key = eq < 0 ? tag : tag.slice(0, eq);
    const value = eq < 0 ? '' : tag.slice(eq + 1);
    const items = byKey.get(key) ?? [];
    items.push({ ...r, id: tag, label: value === '' ? '—' : value });
    byKey.set(key, items);
  }
  if (byKey.size === 0) return <Totals items={[]} by="tag" label="Tag" title="Spend by tag" />;
  return (
    <>
      <p class="muted small">
        Each tag key's shares are of all spend in the range; a request with several tags counts under each of its keys.
      </p>
      {[...byKey.entries()].map(([key, items]) => {
        const sum = (f: (i: Item) => number) => items.reduce((a, i) => a + f(i), 0);
        const rest: Item = {
          id: `no ${key}`,
          label: <span class="muted">(no {key} tag)</span>,
          requests: Math.max(0, all.requests - sum((i) => i.requests)),
          prompt_tokens: Math.max(0, all.prompt_tokens - sum((i) => i.prompt_tokens)),
          completion_tokens: Math.max(0, all.completion_tokens - sum((i) => i.completion_tokens)),
          cost: Math.max(0, all.cost - sum((i) => i.cost)),
        };
        if (rest.cost < 1e-12) rest.cost = 0;
        const shown = rest.requests > 0 || rest.cost > 0 ? [...items, rest] : items;
        return (
          <div key={key} class="tag-group" data-tag-key={key}>
            <h3 id={`tag-${key}`}>
              Tag <code>{key}</code>
            </h3>
            <Totals items={shown} by="tag" label={key} title={`Spend by tag ${key}`} total={all.cost} />
          </div>
        );
      })}
    </>
  );
}

/** A totals table, its tokens in `columns`; each row's share is of `total` (by default, the rows' sum). */
function Totals({
  items,
  by,
  label,
  title,
  total,
  columns = TOTAL_COLUMNS,
}: {
  items: Item[];
  by: string;
  label: string;
  title: string;
  total?: number;
  columns?: Column[];
}) {
  const whole = total ?? items.reduce((a, r) => a + r.cost, 0);
  const pcts = percentages(
    items.map((r) => r.cost),
    whole,
  );
  return (
    <div class="scroll" role="region" aria-label={title} tabIndex={0}>
      <table class={`totals cards by-${by}`}>
        <thead>
          <tr>
            <th scope="col">{label}</th>
            <th scope="col" class="num">
              Requests
            </th>
            {columns.map((c) => (
              <th key={c.col} scope="col" class="num">
                {c.label}
              </th>
            ))}
            <th scope="col" class="num">
              Cost
            </th>
            <th scope="col">Share of cost</th>
          </tr>
        </thead>
        <tbody>
          {items.length === 0 && (
            <tr>
              <td colSpan={columns.length + 4} class="muted">
                No spend in this range.
              </td>
            </tr>
          )}
          {items.map((r, i) => (
            <tr key={r.id}>
              <td data-label={label}>{r.label}</td>
              <td data-label="Requests" class="num">
                {count(r.requests)}
              </td>
              {columns.map((c) => (
                <td key={c.col} data-label={c.label} data-col={c.col} class="num">
                  {c.cell(r)}
                </td>
              ))}
              <td data-label="Cost" class="num" data-cost>
                <Money usd={r.cost} />
              </td>
              <td data-label="Share of cost">
                <ShareBar share={whole > 0 ? r.cost / whole : 0} pct={pcts[i]} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A row's share of the cost as a bar (SVG: the strict CSP allows no style attributes) and a percentage. */
function ShareBar({ share, pct }: { share: number; pct: number }) {
  return (
    <span class="share">
      <svg viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true">
        <rect x={0} y={0} width={100} height={8} class="track" />
        <rect x={0} y={0} width={Math.min(1, share) * 100} height={8} class="bar" />
      </svg>
      <span class="num" data-pct>
        {pct}%
      </span>
    </span>
  );
}

interface Filters {
  model: string;
  key: string;
  tag: string;
}

function Rows({ team, since, keys }: { team: Team; since: string; keys: KeyNames }) {
  const [draft, setDraft] = useState<Filters>({ model: '', key: '', tag: '' });
  const [filters, setFilters] = useState<Filters>(draft);
  const [cursors, setCursors] = useState<string[]>([]);
  const params = { since, model: filters.model.trim(), key: filters.key.trim(), tag: filters.tag.trim() };
  const cursor = cursors[cursors.length - 1];
  const rows = useLoad(() => spendRows(team.id, { ...params, limit: '25', cursor }), [team.id, since, filters, cursor]);

  const apply = (e: Event) => {
    e.preventDefault();
    setCursors([]);
    setFilters({ ...draft });
  };
  const field = (name: keyof Filters, label: string, placeholder: string) => (
    <div class="field">
      <label for={`filter-${name}`}>{label}</label>
      <input id={`filter-${name}`}
        value={draft[name]}
        placeholder={placeholder}
        onInput={(e) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value })}
      />
    </div>
  );

  return (
    <section aria-labelledby="rows-title" class="section">
      <div class="row spread">
        <h2 id="rows-title">Requests</h2>
        <a href={spendCsvUrl(team.id, params)} download="spend.csv">
          Export CSV
        </a>
      </div>
      <form class="row filters-form" onSubmit={apply}>
        {field('model', 'Model', 'any')}
        {field('key', 'Key id', 'any')}
        {field('tag', 'Tag', 'KEY=VALUE')}
        <button type="submit" class="quiet">
          Filter
        </button>
      </form>
      <Loading state={rows} what="the requests">
        {(page) => (
        <div class="scroll" role="region" aria-label="Requests" tabIndex={0}>
          <table class="rows cards">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Model</th>
                <th scope="col">Key</th>
                <th scope="col" class="num">
                  Tokens in/out
                </th>
                <th scope="col" class="num">
                  Cost
                </th>
                <th scope="col">Status</th>
                <th scope="col">Tags</th>
              </tr>
            </thead>
            <tbody>
              {page.data.length === 0 && (
                <tr>
                  <td colSpan={7} class="muted">
                    No requests match.
                  </td>
                </tr>
              )}
              {page.data.map((r) => (
                <tr key={r.request_id}>
                  <td data-label="Time">
                    <time dateTime={r.created_at} title={whenUtc(r.created_at)}>
                      {whenZoned(r.created_at)}
                    </time>
                  </td>
                  <td data-label="Model">{r.model}</td>
                  <td data-label="Key">{r.key ? <KeyName id={r.key} keys={keys} /> : r.user_id ? 'playground' : '—'}</td>
                  <td data-label="Tokens in/out" class="num">
                    {count(r.prompt_tokens)} / {count(r.completion_tokens)}
                  </td>
                  <td data-label="Cost" class="num">
                    <Money usd={r.cost} />
                  </td>
                  <td data-label="Status">
                    {r.status}
                    {r.cache_hit && (
                      <span class="badge hit" title="Answered from the inference cache: charged nothing">
                        cache hit
                      </span>
                    )}
                  </td>
                  <td data-label="Tags">
                    {Object.entries(r.tags ?? {})
                      .map(([k, v]) => `${k}=${v}`)
                      .join(', ') || '—'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        )}
      </Loading>
      <Pager cursors={cursors} next={rows.data?.next_cursor} onChange={setCursors} />
    </section>
  );
}
