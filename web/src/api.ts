// The console's JSON API (docs/console-api.md), as the pages call it: same-origin fetches with the
// session cookie, the CSRF token from `me` on every change, and a 401 sends the browser to the
// sign-in page (saying the session ended when this browser was signed in), the page it was on kept
// to return to after signing in.

export interface Team {
  id: string;
  name: string;
  state: string;
  role: string;
  actions: string[];
}

export interface Me {
  user: { id: string; email: string; name: string };
  csrf_token: string;
  session_expires_at: string;
  teams: Team[];
  /** The roles whose keys work: a key stops when its creator's role is not one of them. */
  key_roles: string[];
}

export interface Key {
  name: string;
  public_id: string;
  created_by: string;
  created_at: string;
  last_used_at: string | null;
  state: string;
  /** Why a key that is not revoked does not work (`state` "inactive"). */
  inactive_reason: string | null;
  revoked_at: string | null;
  /** The key's own rules: when it stops working, and the only models it may ask for (null: none). */
  expires_at: string | null;
  allowed_models: string[] | null;
  /** Its own rate limits (docs/limits.md), each present only when set. */
  rpm?: number;
  tpm?: number;
  concurrent?: number;
  /** Its spend budget (USD, exact) and the window it is counted in, when it has one. */
  budget_usd?: number;
  budget_window?: BudgetWindow;
  /** With a budget: what was charged to the key in its current window (USD). */
  budget_spent_usd?: number;
}

export type BudgetWindow = 'day' | 'week' | 'month' | 'total';

export interface Model {
  id: string;
  display_name: string;
  owned_by: string;
  endpoint: string;
  tee: boolean;
  zdr: boolean;
  input_cost_per_token: number | null;
  output_cost_per_token: number | null;
  cost_per_audio_second: number | null;
  /** Always present: the input price when the operator set none. */
  cached_input_cost_per_token: number | null;
  /** The prices below only when configured. */
  cache_write_cost_per_token?: number;
  cache_write_1h_cost_per_token?: number;
  input_audio_cost_per_token?: number;
  output_audio_cost_per_token?: number;
  price_tiers?: PriceTier[];
  max_input_tokens: number | null;
  max_output_tokens: number | null;
  input_modalities: string[];
  output_modalities: string[];
}

/** A long-context tier: its prices apply to a request whose input exceeds `above_input_tokens`. */
export interface PriceTier {
  above_input_tokens: number;
  input_cost_per_token?: number;
  output_cost_per_token?: number;
  cached_input_cost_per_token?: number;
  cache_write_cost_per_token?: number;
  cache_write_1h_cost_per_token?: number;
}

/** An error answered by the API, with the gateway's message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null,
  ) {
    super(message);
  }
}

let csrfToken = '';

export const SIGN_IN = '/console/signin';
/** Set once this browser has signed in, until it signs out: a 401 then means the session ended. */
const SIGNED_IN = 'tollgate.signed_in';
/** The page to go back to once signed in again. */
export const RETURN_TO = 'tollgate.return_to';

let leaving = false;

/** Sends the browser to the sign-in page, keeping the page it is on to come back to (once: the
 * calls in flight that fail too change nothing). */
function toSignIn() {
  if (leaving) return;
  leaving = true;
  const ended = localStorage.getItem(SIGNED_IN) !== null;
  localStorage.setItem(RETURN_TO, location.pathname);
  const back = `return_to=${encodeURIComponent(location.pathname)}`;
  window.location.assign(`${SIGN_IN}?${ended ? `ended=1&${back}` : back}`);
}

/** The page kept by a sign-in that interrupted the console, once (then forgotten). */
export function takeReturnTo(): string | null {
  const path = localStorage.getItem(RETURN_TO);
  localStorage.removeItem(RETURN_TO);
  return path && path.startsWith('/console/') ? path : null;
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (method !== 'GET') headers['X-CSRF-Token'] = csrfToken;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let r: Response;
  try {
    r = await fetch(`/console/api${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      // The pages' policy is no-referrer, under which a browser sends `Origin: null`; this keeps
      // the real Origin on the console's own calls (the CSRF check wants it).
      referrerPolicy: 'same-origin',
    });
  } catch {
    throw new ApiError(0, 'the gateway could not be reached (a network failure)', 'network_failure');
  }
  if (r.status === 401 && path !== '/auth/logout') {
    toSignIn();
    throw new ApiError(401, 'not signed in', 'not_signed_in');
  }
  const data = await r.json().catch(() => null);
  if (!r.ok) {
    const e = data?.error;
    throw new ApiError(r.status, e?.message ?? `HTTP ${r.status}`, e?.code ?? null);
  }
  return data as T;
}

export async function loadMe(): Promise<Me> {
  const me = await call<Me>('GET', '/me');
  csrfToken = me.csrf_token;
  localStorage.setItem(SIGNED_IN, '1');
  return me;
}

export const signOut = () => {
  localStorage.removeItem(SIGNED_IN);
  return call<unknown>('POST', '/auth/logout');
};

const team = (id: string) => `/teams/${encodeURIComponent(id)}`;

export const listKeys = (teamId: string) => call<Key[]>('GET', `${team(teamId)}/keys`);

/** A key's own rules as the API takes them: an RFC 3339 time and model ids; null: no such rule. */
export interface KeyRules {
  expires_at: string | null;
  allowed_models: string[] | null;
  /** Its rate limits: each left out is unchanged (only the operator removes one). */
  rpm?: number;
  tpm?: number;
  concurrent?: number;
  /** Its spend budget, a decimal string of USD; null removes it; left out: unchanged. */
  budget_usd?: string | null;
  budget_window?: BudgetWindow;
}

export const createKey = (teamId: string, name: string, rules: KeyRules) =>
  call<{ key: Key; secret: string }>('POST', `${team(teamId)}/keys`, { name, ...rules });

/** Sets both rules (null clears one): an owner's or admin's change. */
export const changeKeyRules = (teamId: string, publicId: string, rules: KeyRules) =>
  call<{ key: Key; gateways_lagging: number }>(
    'PATCH',
    `${team(teamId)}/keys/${encodeURIComponent(publicId)}`,
    rules,
  );

export const revokeKey = (teamId: string, publicId: string) =>
  call<{ revoked: boolean }>('DELETE', `${team(teamId)}/keys/${encodeURIComponent(publicId)}`);

export const listModels = () => call<{ data: Model[] }>('GET', '/models');

export interface TeamDetail {
  id: string;
  name: string;
  state: string;
  created_at: string;
  role: string;
  members: number;
  active_keys: number;
  balance?: number;
  reserved?: number;
  available?: number;
}

export interface Member {
  user_id: string;
  email: string;
  name: string;
  role: string;
  joined_at: string;
}

export interface Invitation {
  id: string;
  role: string;
  email: string | null;
  state: string;
  created_at: string;
  expires_at: string;
  accepted_by: string | null;
}

export interface FunctionInfo {
  name: string;
  model: string;
  variants: { name: string; model: string; weight: number }[];
}

export type SpendGroup = 'day' | 'model' | 'key' | 'tag' | 'user';

/** The parts of a request's prompt and completion tokens by kind (docs/console-api.md); 0 for none. */
export interface TokenKinds {
  cached_tokens: number;
  cache_write_tokens: number;
  cache_write_1h_tokens: number;
  audio_prompt_tokens: number;
  reasoning_tokens: number;
  audio_completion_tokens: number;
}

export interface SpendTotal extends TokenKinds {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
  /** Prompt tokens neither read from nor written to a cache. */
  uncached_prompt_tokens: number;
  [group: string]: string | number | null;
}

export interface SpendRow extends TokenKinds {
  request_id: string;
  created_at: string;
  key: string | null;
  user_id: string | null;
  endpoint: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
  tags: Record<string, string>;
  status: number;
  upstream_ms: number;
  streamed: boolean;
  cache_hit: boolean;
}

export interface AuditEntry {
  id: string;
  at: string;
  actor: string;
  team: string;
  action: string;
  target: string;
  source: string;
}

/** A balance alert's delivery to the configured webhook (docs/alerts.md). */
export interface AlertDelivery {
  id: string;
  type: string;
  created_at: string;
  team: string;
  /** A balance's amount (USD), or for a key's budget the fraction crossed. */
  threshold: number;
  balance_usd?: number;
  /** key_budget.crossed: the key, its spend in the window after the charge, and its budget. */
  key?: string;
  spend_usd?: number;
  budget_usd?: number;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  delivered_at: string | null;
  failed_at: string | null;
  last_status: number | null;
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** A query string of the values that are set, e.g. `?since=2026-11-01&model=m`. */
export function query(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const createTeam = (name: string) => call<{ id: string; name: string }>('POST', '/teams', { name });

export const getTeam = (teamId: string) => call<TeamDetail>('GET', team(teamId));

export const listMembers = (teamId: string) => call<Member[]>('GET', `${team(teamId)}/members`);

export const changeRole = (teamId: string, userId: string, role: string) =>
  call<Member>('PATCH', `${team(teamId)}/members/${encodeURIComponent(userId)}`, { role });

export const removeMember = (teamId: string, userId: string) =>
  call<{ removed: boolean }>('DELETE', `${team(teamId)}/members/${encodeURIComponent(userId)}`);

export const listInvitations = (teamId: string) => call<Invitation[]>('GET', `${team(teamId)}/invitations`);

export const createInvitation = (teamId: string, role: string, email: string) =>
  call<{ invitation: Invitation; token: string; link: string }>(
    'POST',
    `${team(teamId)}/invitations`,
    email ? { role, email } : { role },
  );

export const revokeInvitation = (teamId: string, id: string) =>
  call<{ revoked: boolean }>('DELETE', `${team(teamId)}/invitations/${encodeURIComponent(id)}`);

export const acceptInvitation = (token: string) => call<unknown>('POST', '/invitations/accept', { token });

/** What an invitation offers: the team's name, the role, and who made it (an email, or `operator`). */
export interface InvitationPreview {
  team: string;
  role: string;
  invited_by: string;
}

export const previewInvitation = (token: string) =>
  call<InvitationPreview>('POST', '/invitations/preview', { token });

export const listFunctions = () => call<{ data: FunctionInfo[] }>('GET', '/functions');

export const spendSummary = (teamId: string, by: SpendGroup, since: string) =>
  call<{ by: string; since: string; data: SpendTotal[] }>(
    'GET',
    `${team(teamId)}/spend/summary${query({ by, since })}`,
  );

export const spendRows = (teamId: string, filters: Record<string, string | undefined>) =>
  call<Page<SpendRow>>('GET', `${team(teamId)}/spend${query(filters)}`);

export const spendCsvUrl = (teamId: string, filters: Record<string, string | undefined>) =>
  `/console/api${team(teamId)}/spend.csv${query(filters)}`;

export const auditLog = (teamId: string, cursor?: string) =>
  call<Page<AuditEntry>>('GET', `${team(teamId)}/audit${query({ limit: '50', cursor })}`);

export const alertDeliveries = (teamId: string) =>
  call<Page<AlertDelivery>>('GET', `${team(teamId)}/alerts${query({ limit: '20' })}`);

/** The playground's call: a fetch the caller reads as a stream (or aborts). */
export function playgroundFetch(teamId: string, body: unknown, signal: AbortSignal): Promise<Response> {
  return fetch(`/console/api${team(teamId)}/chat/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', 'X-CSRF-Token': csrfToken },
    body: JSON.stringify(body),
    credentials: 'same-origin',
    referrerPolicy: 'same-origin',
    signal,
  });
}
