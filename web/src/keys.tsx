// The team's API keys: the list (name, creator, created, last used, its own rules: expiry and
// allowed models, state: a key that is not revoked but does not work is inactive, with why), a
// form that creates one (with rules, if wanted) and shows its secret once, a dialog in which
// owners and admins change a key's rules, and revocation after a confirmation that names the
// key. Only the buttons the caller's role allows in the team are offered (`actions` from `me`).
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import {
  changeKeyRules,
  createKey,
  listKeys,
  revokeKey,
  type BudgetWindow,
  type Key,
  type KeyRules as Rules,
  type Me,
  type Team,
} from './api';
import { ConfirmDialog } from './confirm';
import { Loading, useLoad } from './load';
import { ShownOnce } from './shown_once';
import { article, shownName, when } from './format';

interface Props {
  team: Team;
  me: Me;
}

/** Why an inactive key does not work, in words (the API's `inactive_reason`). */
const INACTIVE_REASONS: Record<string, string> = {
  creator_not_member: 'its creator is no longer a member of the team',
  creator_role: "its creator's role may no longer use keys",
  expired: 'it has expired',
};

export function KeysPage({ team, me }: Props) {
  const keys = useLoad(() => listKeys(team.id), [team.id]);
  const [made, setMade] = useState<{ key: Key; secret: string } | null>(null);
  const [revoking, setRevoking] = useState<Key | null>(null);
  const [editing, setEditing] = useState<Key | null>(null);
  const canCreate = team.actions.includes('create_key');
  const canRevokeAny = team.actions.includes('revoke_any_key');
  const mayRevoke = (k: Key) =>
    k.state !== 'revoked' && (canRevokeAny || (canCreate && k.created_by === me.user.email));

  const refresh = keys.reload;

  const onCreated = (result: { key: Key; secret: string }) => {
    setMade(result);
    refresh();
  };
  const onRevoked = () => {
    setRevoking(null);
    refresh();
  };
  const onRulesChanged = () => {
    setEditing(null);
    refresh();
  };

  return (
    <>
      <h1>API keys</h1>
      <p class="muted">
        Keys of team <strong>{shownName(team.name)}</strong>, for <code>/v1</code>. You are {article(team.role)}{' '}
        {team.role} here.
      </p>
      {canCreate && <CreateKey team={team} onCreated={onCreated} />}
      {made && <Secret made={made} onDone={() => setMade(null)} />}
      <Loading state={keys} what="the keys">
        {(keys) => (
          <div class="scroll" role="region" aria-label="API keys" tabIndex={0}>
            <table class="keys cards">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Created by</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Rules</th>
                  <th scope="col">State</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.length === 0 && (
                  <tr>
                    <td colSpan={8} class="muted">
                      No keys yet.
                    </td>
                  </tr>
                )}
                {keys.map((k) => (
                  <tr key={k.public_id} data-key={k.public_id}>
                    <td data-label="Name">{shownName(k.name)}</td>
                    <td data-label="Key">
                      <code class="nowrap">sk-tollgate-{k.public_id}-…</code>
                    </td>
                    <td data-label="Created by">{k.created_by || '—'}</td>
                    <td data-label="Created">{when(k.created_at)}</td>
                    <td data-label="Last used">{when(k.last_used_at)}</td>
                    <td data-label="Rules" data-rules>
                      <KeyRules k={k} />
                    </td>
                    <td data-label="State">
                      <span class={`state state-${k.state}`}>{k.state}</span>
                      {k.state === 'inactive' && (
                        <span class="muted small" data-inactive-reason>
                          {' '}
                          ({INACTIVE_REASONS[k.inactive_reason ?? ''] ?? 'it does not work'})
                        </span>
                      )}
                    </td>
                    <td class="actions">
                      {canRevokeAny && k.state !== 'revoked' && (
                        <button type="button" class="small" onClick={() => setEditing(k)}>
                          Rules<span class="sr-only"> of {shownName(k.name)}</span>
                        </button>
                      )}
                      {mayRevoke(k) && (
                        <button type="button" class="danger small" onClick={() => setRevoking(k)}>
                          Revoke<span class="sr-only"> {shownName(k.name)}</span>
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Loading>
      {editing && (
        <RulesDialog team={team} k={editing} onDone={onRulesChanged} onCancel={() => setEditing(null)} />
      )}
      {revoking && (
        <ConfirmDialog
          title={`Revoke “${shownName(revoking.name)}”?`}
          action={`Revoke “${shownName(revoking.name)}”`}
          act={() => revokeKey(team.id, revoking.public_id)}
          onDone={onRevoked}
          onCancel={() => setRevoking(null)}
        >
          The key <code>sk-tollgate-{revoking.public_id}-…</code>{' '}
          {revoking.state === 'inactive'
            ? 'never works again, even once its creator may use keys again.'
            : 'stops working at once, on every gateway.'}{' '}
          This cannot be undone.
        </ConfirmDialog>
      )}
    </>
  );
}

/** A key's own rate limits and budget, as a line: "60 requests/min · 4 at once · budget 25 USD per
 * month". */
function limitsText(k: Key): string {
  const parts = [
    k.rpm !== undefined && `${k.rpm} requests/min`,
    k.tpm !== undefined && `${k.tpm} tokens/min`,
    k.concurrent !== undefined && `${k.concurrent} at once`,
    k.budget_usd !== undefined &&
      `budget ${k.budget_usd} USD ${k.budget_window === 'total' ? 'in all' : `per ${k.budget_window}`}` +
        ` (${k.budget_spent_usd ?? 0} spent${k.budget_window === 'total' ? '' : ` this ${k.budget_window}`})`,
  ];
  return parts.filter(Boolean).join(' · ');
}

/** A key's own rules: when it expires, the models it may use and its own rate limits; "—" when it
 * has none. */
function KeyRules({ k }: { k: Key }) {
  const limits = limitsText(k);
  if (!k.expires_at && !k.allowed_models && !limits) return <>—</>;
  return (
    <>
      {k.expires_at && <div data-expires-at>Expires {when(k.expires_at)}</div>}
      {limits && <div data-limits>{limits}</div>}
      {k.allowed_models && (
        <div data-allowed-models>
          Only{' '}
          {k.allowed_models.map((m, i) => (
            <span key={m}>
              {i > 0 && ', '}
              <code>{m}</code>
            </span>
          ))}
        </div>
      )}
    </>
  );
}

/** The rules as the inputs show them: a local date and time, model ids with commas, the rate
 * limits and the budget as typed, and the budget's window. */
interface RuleText {
  expires: string;
  models: string;
  rpm: string;
  tpm: string;
  concurrent: string;
  budget: string;
  window: BudgetWindow;
}

const NO_RULES: RuleText = { expires: '', models: '', rpm: '', tpm: '', concurrent: '', budget: '', window: 'month' };

/** A whole number typed in a limit's input; undefined when empty (unchanged). */
const count = (text: string) => (text.trim() === '' ? undefined : Number(text));

/** The value of a datetime-local input for an RFC 3339 time: local, to the minute. */
function localInput(t: string | null): string {
  if (!t) return '';
  const d = new Date(t);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The rules to send: on a change of `base`, a rate limit or budget only when it differs from
 * the key's (an operator may have set one the console cannot set again). */
function rulesOf(text: RuleText, base?: RuleText): Rules {
  const changed = (field: keyof RuleText) => !base || base[field] !== text[field];
  const models = text.models
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');
  const budget = text.budget.trim();
  return {
    expires_at: text.expires ? new Date(text.expires).toISOString() : null,
    allowed_models: models.length > 0 ? models : null,
    rpm: changed('rpm') ? count(text.rpm) : undefined,
    tpm: changed('tpm') ? count(text.tpm) : undefined,
    concurrent: changed('concurrent') ? count(text.concurrent) : undefined,
    ...(changed('budget') || changed('window')
      ? { budget_usd: budget === '' ? null : budget, ...(budget === '' ? {} : { budget_window: text.window }) }
      : {}),
  };
}

function RuleFields({ id, text, onChange }: { id: string; text: RuleText; onChange: (t: RuleText) => void }) {
  return (
    // A span: the confirmation dialog holds its text in a paragraph.
    <span class="rules">
      <label for={`${id}-expires`}>Expires (empty: never)</label>
      <input
        id={`${id}-expires`}
        type="datetime-local"
        value={text.expires}
        onInput={(e) => onChange({ ...text, expires: (e.target as HTMLInputElement).value })}
      />
      <label for={`${id}-models`}>Only these models (ids with commas; empty: any)</label>
      <input
        id={`${id}-models`}
        autoComplete="off"
        placeholder="e.g. gpt_4o_mini, tollgate::function_name::triage"
        value={text.models}
        onInput={(e) => onChange({ ...text, models: (e.target as HTMLInputElement).value })}
      />
      {(['rpm', 'tpm', 'concurrent'] as const).map((limit) => (
        <Fragment key={limit}>
          <label for={`${id}-${limit}`}>
            {limit === 'rpm' ? 'Requests a minute' : limit === 'tpm' ? 'Tokens a minute' : 'Requests at once'} (empty:
            unchanged; at most the operator's)
          </label>
          <input
            id={`${id}-${limit}`}
            type="number"
            min={1}
            step={1}
            value={text[limit]}
            onInput={(e) => onChange({ ...text, [limit]: (e.target as HTMLInputElement).value })}
          />
        </Fragment>
      ))}
      <label for={`${id}-budget`}>Budget in USD (empty: none)</label>
      <input
        id={`${id}-budget`}
        inputMode="decimal"
        autoComplete="off"
        placeholder="e.g. 25.00"
        value={text.budget}
        onInput={(e) => onChange({ ...text, budget: (e.target as HTMLInputElement).value })}
      />
      <label for={`${id}-window`}>Budget per</label>
      <select
        id={`${id}-window`}
        value={text.window}
        onChange={(e) => onChange({ ...text, window: (e.target as HTMLSelectElement).value as BudgetWindow })}
      >
        <option value="day">day (UTC)</option>
        <option value="week">week (from Monday)</option>
        <option value="month">month (from the 1st)</option>
        <option value="total">all time</option>
      </select>
    </span>
  );
}

function RulesDialog({ team, k, onDone, onCancel }: { team: Team; k: Key; onDone: () => void; onCancel: () => void }) {
  const initial: RuleText = {
    expires: localInput(k.expires_at),
    models: (k.allowed_models ?? []).join(', '),
    rpm: k.rpm !== undefined ? String(k.rpm) : '',
    tpm: k.tpm !== undefined ? String(k.tpm) : '',
    concurrent: k.concurrent !== undefined ? String(k.concurrent) : '',
    budget: k.budget_usd !== undefined ? String(k.budget_usd) : '',
    window: k.budget_window ?? 'month',
  };
  const [text, setText] = useState<RuleText>(initial);
  return (
    <ConfirmDialog
      title={`Rules of “${shownName(k.name)}”`}
      action="Save rules"
      act={() => changeKeyRules(team.id, k.public_id, rulesOf(text, initial))}
      onDone={onDone}
      onCancel={onCancel}
    >
      A narrower rule applies on every gateway before this returns.
      <RuleFields id="edit-rules" text={text} onChange={setText} />
    </ConfirmDialog>
  );
}

function CreateKey({ team, onCreated }: { team: Team; onCreated: (r: { key: Key; secret: string }) => void }) {
  const [name, setName] = useState('');
  const [rules, setRules] = useState<RuleText>(NO_RULES);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onCreated(await createKey(team.id, name.trim(), rulesOf(rules)));
      setName('');
      setRules(NO_RULES);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="create" onSubmit={submit}>
      <label for="key-name">New key's name</label>
      <div class="row">
        <input
          id="key-name"
          name="name"
          required
          maxLength={100}
          autoComplete="off"
          placeholder="e.g. laptop, ci, billing-service"
          value={name}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={busy || name.trim() === ''}>
          Create key
        </button>
      </div>
      <details>
        <summary>Rules (optional)</summary>
        <RuleFields id="new-key-rules" text={rules} onChange={setRules} />
      </details>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </form>
  );
}

function Secret({ made, onDone }: { made: { key: Key; secret: string }; onDone: () => void }) {
  return (
    <ShownOnce
      title={<>Key “{shownName(made.key.name)}” created</>}
      warning="Copy this secret now. It will not be shown again: Tollgate keeps only a hash of it."
      value={made.secret}
      what="secret"
      copyLabel="Copy"
      doneLabel="I have stored it"
      valueData={{ 'data-secret': '' }}
      onDone={onDone}
    />
  );
}

