// The team's usage: balance, reserved and available (GET team); spend per day over a chosen range
// as a chart (SVG, no style attributes, so the strict CSP holds) and a table; totals by model,
// key, tag or user; the raw rows with filters and paging (next_cursor); the same rows as CSV.
import { useEffect, useState } from 'preact/hooks';
import {
  getTeam,
  spendCsvUrl,
  spendRows,
  spendSummary,
  type SpendGroup,
  type SpendRow,
  type SpendTotal,
  type Team,
  type TeamDetail,
} from './api';
import { count, money, when } from './format';
import { Pager } from './pager';

const RANGES = [7, 30, 90] as const;
const GROUPS: { by: Exclude<SpendGroup, 'day'>; label: string }[] = [
  { by: 'model', label: 'Model' },
  { by: 'key', label: 'Key' },
  { by: 'tag', label: 'Tag' },
  { by: 'user', label: 'User' },
];

/** The UTC day `days` days before today, as YYYY-MM-DD. */
function daysAgo(days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
}

export function UsagePage({ team }: { team: Team }) {
  const [detail, setDetail] = useState<TeamDetail | null>(null);
  const [range, setRange] = useState<number>(30);
  const [daily, setDaily] = useState<SpendTotal[] | null>(null);
  const [by, setBy] = useState<Exclude<SpendGroup, 'day'>>('model');
  const [breakdown, setBreakdown] = useState<SpendTotal[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const since = daysAgo(range - 1);
  const fail = (e: Error) => setError(e.message);

  useEffect(() => {
    getTeam(team.id).then(setDetail, fail);
  }, [team.id]);
  useEffect(() => {
    spendSummary(team.id, 'day', since).then((r) => setDaily(r.data), fail);
  }, [team.id, since]);
  useEffect(() => {
    setBreakdown(null);
    spendSummary(team.id, by, since).then((r) => setBreakdown(r.data), fail);
  }, [team.id, by, since]);

  return (
    <>
      <h1>Usage</h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <dl class="stats balance" aria-label="Balance">
        <div>
          <dt>Balance</dt>
          <dd data-balance>{detail ? money(detail.balance) : '…'}</dd>
        </div>
        <div>
          <dt>Reserved</dt>
          <dd>{detail ? money(detail.reserved) : '…'}</dd>
        </div>
        <div>
          <dt>Available</dt>
          <dd>{detail ? money(detail.available) : '…'}</dd>
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
        {daily === null ? <p class="muted">Loading…</p> : <DailyChart rows={daily} since={since} days={range} />}
        {daily && <Totals rows={daily} by="day" label="Day" title="Spend per day" />}
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
        {breakdown === null ? (
          <p class="muted">Loading…</p>
        ) : (
          <Totals rows={breakdown} by={by} label={GROUPS.find((g) => g.by === by)?.label ?? by} title={`Spend by ${by}`} />
        )}
      </section>
      <Rows team={team} since={since} />
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
      <svg viewBox={`0 0 ${CHART_W} ${CHART_H + 1}`} role="img" aria-label={`Spend per day since ${since}: ${money(total)} in all`}>
        <line x1={0} y1={CHART_H} x2={CHART_W} y2={CHART_H} class="axis" />
        {series.map((s, i) => {
          const h = max > 0 ? (s.cost / max) * (CHART_H - 8) : 0;
          return (
            <rect key={s.day} x={i * slot + slot * 0.15} y={CHART_H - h} width={slot * 0.7} height={h} class="bar">
              <title>
                {s.day}: {money(s.cost)}
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
        {max > 0 ? `Highest day ${money(max)}; ${money(total)} in all.` : 'No spend in this range.'}
      </figcaption>
    </figure>
  );
}

function Totals({ rows, by, label, title }: { rows: SpendTotal[]; by: string; label: string; title: string }) {
  const total = rows.reduce((a, r) => a + r.cost, 0);
  return (
    <div class="scroll" role="region" aria-label={title} tabIndex={0}>
      <table class={`totals cards by-${by}`}>
        <thead>
          <tr>
            <th scope="col">{label}</th>
            <th scope="col" class="num">
              Requests
            </th>
            <th scope="col" class="num">
              Prompt tokens
            </th>
            <th scope="col" class="num">
              Completion tokens
            </th>
            <th scope="col" class="num">
              Cost
            </th>
            <th scope="col">Share of cost</th>
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && (
            <tr>
              <td colSpan={6} class="muted">
                No spend in this range.
              </td>
            </tr>
          )}
          {rows.map((r, i) => (
            <tr key={i}>
              <td data-label={label}>{r[by] === null || r[by] === '' ? '—' : String(r[by])}</td>
              <td data-label="Requests" class="num">
                {count(r.requests)}
              </td>
              <td data-label="Prompt tokens" class="num">
                {count(r.prompt_tokens)}
              </td>
              <td data-label="Completion tokens" class="num">
                {count(r.completion_tokens)}
              </td>
              <td data-label="Cost" class="num">
                {money(r.cost)}
              </td>
              <td data-label="Share of cost">
                <ShareBar share={total > 0 ? r.cost / total : 0} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A row's share of the cost as a bar (SVG: the strict CSP allows no style attributes) and a percentage. */
function ShareBar({ share }: { share: number }) {
  const pct = Math.round(share * 100);
  return (
    <span class="share">
      <svg viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true">
        <rect x={0} y={0} width={100} height={8} class="track" />
        <rect x={0} y={0} width={share * 100} height={8} class="bar" />
      </svg>
      <span class="num">{pct}%</span>
    </span>
  );
}

interface Filters {
  model: string;
  key: string;
  tag: string;
}

function Rows({ team, since }: { team: Team; since: string }) {
  const [draft, setDraft] = useState<Filters>({ model: '', key: '', tag: '' });
  const [filters, setFilters] = useState<Filters>(draft);
  const [cursors, setCursors] = useState<string[]>([]);
  const [page, setPage] = useState<{ data: SpendRow[]; next_cursor: string | null } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const params = { since, model: filters.model.trim(), key: filters.key.trim(), tag: filters.tag.trim() };
  const cursor = cursors[cursors.length - 1];

  useEffect(() => {
    setPage(null);
    setError(null);
    spendRows(team.id, { ...params, limit: '25', cursor }).then(setPage, (e: Error) => setError(e.message));
  }, [team.id, since, filters, cursor]);

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
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {page === null && !error && <p class="muted">Loading…</p>}
      {page && (
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
                  <td data-label="Time">{when(r.created_at)}</td>
                  <td data-label="Model">{r.model}</td>
                  <td data-label="Key">{r.key ? <code>{r.key}</code> : r.user_id ? 'playground' : '—'}</td>
                  <td data-label="Tokens in/out" class="num">
                    {count(r.prompt_tokens)} / {count(r.completion_tokens)}
                  </td>
                  <td data-label="Cost" class="num">
                    {money(r.cost)}
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
      <Pager cursors={cursors} next={page?.next_cursor} onChange={setCursors} />
    </section>
  );
}
