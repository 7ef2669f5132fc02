// The invitation-accept page, /console/invite?token=…: a button that accepts the invitation as the
// signed-in user, then opens the team joined. The token is kept in localStorage (rememberInvite),
// so that a link opened before signing in still works after the sign-in, and taken out of the
// address bar.
import { useState } from 'preact/hooks';
import { acceptInvitation, loadMe, type Me } from './api';

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
  return (
    <>
      <h1>Join a team</h1>
      <p>
        You have an invitation to a team on this gateway. Accepting it makes <strong>{me.user.email}</strong> a member
        with the role the invitation names.
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
