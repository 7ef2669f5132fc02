// The console's JSON API (docs/console-api.md), as the pages call it: same-origin fetches with the
// session cookie, the CSRF token from `me` on every change, and a 401 sends the browser to the
// sign-in page.

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
}

export interface Key {
  name: string;
  public_id: string;
  created_by: string;
  created_at: string;
  last_used_at: string | null;
  state: string;
  revoked_at: string | null;
}

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
  max_input_tokens: number | null;
  max_output_tokens: number | null;
  input_modalities: string[];
  output_modalities: string[];
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

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (method !== 'GET') headers['X-CSRF-Token'] = csrfToken;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(`/console/api${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    // The pages' policy is no-referrer, under which a browser sends `Origin: null`; this keeps the
    // real Origin on the console's own calls (the CSRF check wants it).
    referrerPolicy: 'same-origin',
  });
  if (r.status === 401 && path !== '/auth/logout') {
    window.location.assign(SIGN_IN);
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
  return me;
}

export const signOut = () => call<unknown>('POST', '/auth/logout');

const team = (id: string) => `/teams/${encodeURIComponent(id)}`;

export const listKeys = (teamId: string) => call<Key[]>('GET', `${team(teamId)}/keys`);

export const createKey = (teamId: string, name: string) =>
  call<{ key: Key; secret: string }>('POST', `${team(teamId)}/keys`, { name });

export const revokeKey = (teamId: string, publicId: string) =>
  call<{ revoked: boolean }>('DELETE', `${team(teamId)}/keys/${encodeURIComponent(publicId)}`);

export const listModels = () => call<{ data: Model[] }>('GET', '/models');
