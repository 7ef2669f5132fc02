// For the playground: what a run was billed, read from its spend row (the spend call's
// `request_id` filter, with the run's `x-request-id`), and a refusal for want of balance in words.
import { getTeam, spendRows, type Team } from './api';
import { cents, shownName } from './format';

/** The spend row is written when the run settles, just after its stream ends: looked for this
 * many times, this far apart. */
const LOOKS = 10;
const LOOK_MS = 300;

export interface Billed {
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
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
    if (row) return { prompt_tokens: row.prompt_tokens, completion_tokens: row.completion_tokens, cost: row.cost };
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
