// The invitation-accept page, /console/invite?token=…: what the invitation offers (the team, the
// role and who invited, from the preview call, which writes nothing), a button that accepts it as
// the signed-in user, then opens the team joined. The token is kept in localStorage (rememberInvite),
// so that a link opened before signing in still works after the sign-in, and taken out of the
// address bar.
import { useState } from 'preact/hooks';
import { acceptInvitation, ApiError, loadMe, previewInvitation, type Me } from './api';
import { article, shownName } from './format';
import { Failed, useLoad } from './load';

/** What the preview answers for an invitation the caller cannot use. */
const GONE = 'gone' as const;
const gone = (e: unknown): typeof GONE => {
  if (e instanceof ApiError && e.status === 404) return GONE;
  throw e;
};

export const PENDING_INVITE = 'tollgate.invite';
const INVITE_TOKEN = /^[A-Za-z0-9_-]{8,200}$/;

/** Keeps an invitation's token until it is used or dismissed. */
export function rememberInvite(token: string | null) {
  if (token && INVITE_TOKEN.test(token)) localStorage.setItem(PENDING_INVITE, token);
}

interface Props {
  me: Me;
  onJoined: (teamId: string) => void;
}

export function InvitePage({ me, onJoined }: Props) {
  // Read once: a link that was not accepted is not offered again on every visit.
  const [token] = useState(() => {
    const t = localStorage.getItem(PENDING_INVITE);
    localStorage.removeItem(PENDING_INVITE);
    return t;
  });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [dismissed, setDismissed] = useState(false);
  // An unknown token, or one used, revoked, expired or meant for someone else: all the same 404.
  const preview = useLoad(() => (token ? previewInvitation(token).catch(gone) : Promise.resolve(GONE)), [token]);

  const accept = async () => {
    if (!token) return;
    setBusy(true);
    setError(null);
    try {
      const before = new Set(me.teams.map((t) => t.id));
      await acceptInvitation(token);
      const after = await loadMe();
      const joined = after.teams.find((t) => !before.has(t.id)) ?? after.teams[0];
      onJoined(joined?.id ?? '');
    } catch (e) {
      setError((e as Error).message);
      setBusy(false);
    }
  };
  const dismiss = () => setDismissed(true);

  if (!token || dismissed) {
    return (
      <>
        <h1>Invitation</h1>
        <p>
          {dismissed
            ? 'The invitation was set aside.'
            : 'This page needs the invitation link you were sent, which ends in ?token=….'}
        </p>
      </>
    );
  }
  if (preview.data === GONE) {
    return (
      <>
        <h1>Invitation</h1>
        <p role="alert" class="error">
          This invitation cannot be used by {me.user.email}: it was used, revoked or has expired, or it was meant for
          another email address. Ask whoever invited you for a new one.
        </p>
      </>
    );
  }
  if (preview.error !== null) return <Failed what="the invitation" error={preview.error} onRetry={preview.reload} />;
  if (!preview.data) return <p class="muted">Loading the invitation…</p>;
  const { team, role, invited_by } = preview.data;
  const by = invited_by === 'operator' ? 'The operator' : invited_by;
  return (
    <>
      <h1>Join team {shownName(team)}</h1>
      <p data-invitation-summary>
        {by} invited you to team <strong>{shownName(team)}</strong> as {article(role)} <strong>{role}</strong>.
      </p>
      <p>
        Accepting makes <strong>{me.user.email}</strong> {article(role)} {role} of {shownName(team)}.
      </p>
      <div class="row">
        <button type="button" onClick={accept} disabled={busy}>
          Accept the invitation
        </button>
        <button type="button" class="quiet" onClick={dismiss} disabled={busy}>
          Not now
        </button>
      </div>
      {error && (
        <p role="alert" class="error">
          The invitation could not be accepted: {error}
        </p>
      )}
    </>
  );
}
