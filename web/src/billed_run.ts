// For the playground: what a run was billed, read from its spend row (the spend call's
// `request_id` filter, with the run's `x-request-id`) or its stream's usage, its tokens by kind in
// words, and a refusal for want of balance in words.
import { getTeam, spendRows, type Team, type TokenKinds } from './api';
import { cents, count, shownName } from './format';

/** The spend row is written when the run settles, just after its stream ends: looked for this
 * many times, this far apart. */
const LOOKS = 10;
const LOOK_MS = 300;

export interface Billed extends TokenKinds {
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
}

/** The kinds of a usage object as answers carry it (OpenAI's details objects, the gateway's
 * cache writes); 0 for what it leaves out. */
export function usageKinds(usage: Record<string, any> | null): TokenKinds {
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return {
    cached_tokens: n(usage?.prompt_tokens_details?.cached_tokens),
    cache_write_tokens: n(usage?.['tollgate::cache_write_tokens']),
    cache_write_1h_tokens: n(usage?.['tollgate::cache_write_1h_tokens']),
    audio_prompt_tokens: n(usage?.prompt_tokens_details?.audio_tokens),
    reasoning_tokens: n(usage?.completion_tokens_details?.reasoning_tokens),
    audio_completion_tokens: n(usage?.completion_tokens_details?.audio_tokens),
  };
}

/** A run's tokens with the kinds that are not zero: "1,000 in (800 cached), 40 out (30 reasoning)". */
export function tokensText(t: { prompt_tokens: number; completion_tokens: number } & TokenKinds): string {
  const parts = (list: [number, string][]) => {
    const shown = list.filter(([n]) => n > 0).map(([n, what]) => `${count(n)} ${what}`);
    return shown.length ? ` (${shown.join(', ')})` : '';
  };
  const input = parts([
    [t.cached_tokens, 'cached'],
    [t.cache_write_tokens, 'written to the cache'],
    [t.audio_prompt_tokens, 'audio'],
  ]);
  const output = parts([
    [t.reasoning_tokens, 'reasoning'],
    [t.audio_completion_tokens, 'audio'],
  ]);
  return `${count(t.prompt_tokens)} in${input}, ${count(t.completion_tokens)} out${output}`;
}

/** The tokens and cost billed for the run `requestId`; null when its row does not come, or the
 * caller may not read spend. */
export async function billedRun(teamId: string, requestId: string): Promise<Billed | null> {
  for (let i = 0; i < LOOKS; i++) {
    if (i > 0) await new Promise((done) => setTimeout(done, LOOK_MS));
    let rows;
    try {
      rows = (await spendRows(teamId, { request_id: requestId, limit: '1' })).data;
    } catch {
      return null;
    }
    const row = rows[0];
    if (!row) continue;
    return {
      prompt_tokens: row.prompt_tokens,
      completion_tokens: row.completion_tokens,
      cost: row.cost,
      cached_tokens: row.cached_tokens ?? 0,
      cache_write_tokens: row.cache_write_tokens ?? 0,
      cache_write_1h_tokens: row.cache_write_1h_tokens ?? 0,
      audio_prompt_tokens: row.audio_prompt_tokens ?? 0,
      reasoning_tokens: row.reasoning_tokens ?? 0,
      audio_completion_tokens: row.audio_completion_tokens ?? 0,
    };
  }
  return null;
}

/** Why a run was refused for want of balance, and who can help: "Team research has $0.00; an
 * owner or the operator can top it up." */
export async function refusalText(team: Team): Promise<string> {
  const detail = await getTeam(team.id).catch(() => null);
  // What requests may spend: the balance less what requests in flight hold.
  const left = detail?.available ?? detail?.balance;
  const has = left === undefined ? 'has no balance left' : `has ${cents(left)}`;
  return `Team ${shownName(team.name)} ${has}; an owner or the operator can top it up.`;
}
