// The team: its members with their roles (change a role with Save and a confirmation,
// role_change.tsx; remove a member), and its invitations
// (create a link with a role and an optional email, shown once with a copy button; the list with
// each one's state; revoke a pending one). What is offered follows the caller's actions from `me`:
// change_roles for members, manage_owners for owners too, invite for invitations.
import { useState } from 'preact/hooks';
import { ConfirmDialog } from './confirm';
import { Loading, useLoad } from './load';
import { RoleChange } from './role_change';
import { ShownOnce } from './shown_once';
import {
  createInvitation,
  listInvitations,
  listMembers,
  removeMember,
  revokeInvitation,
  type Invitation,
  type Me,
  type Member,
  type Team,
} from './api';
import { CreateTeam } from './create_team';
import { article, shownName, when } from './format';

const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;

interface Props {
  team: Team;
  me: Me;
  /** Opens a team just made. */
  onCreated: (teamId: string) => void;
}

export function TeamPage({ team, me, onCreated }: Props) {
  const members = useLoad(() => listMembers(team.id), [team.id]);
  const [notice, setNotice] = useState<string | null>(null);
  const [removing, setRemoving] = useState<Member | null>(null);
  const canChange = team.actions.includes('change_roles');
  const canOwners = team.actions.includes('manage_owners');
  const canInvite = team.actions.includes('invite');
  /** Roles the caller may give, or take away. */
  const mayManage = (role: string) => canChange && (role !== 'owner' || canOwners);
  const roles = ROLES.filter((r) => mayManage(r));

  const refresh = members.reload;

  return (
    <>
      <h1>Team {shownName(team.name)}</h1>
      <p class="muted">
        You are {article(team.role)} {team.role} of this team
        {team.state !== 'active' && <> (the team is {team.state})</>}.
      </p>
      <h2>Members</h2>
      <p role="status" class="notice" data-notice>
        {notice}
      </p>
      <Loading state={members} what="the members">
        {(members) => (
          <div class="scroll" role="region" aria-label="Members" tabIndex={0}>
            <table class="members cards">
              <thead>
                <tr>
                  <th scope="col">Email</th>
                  <th scope="col">Name</th>
                  <th scope="col">Role</th>
                  <th scope="col">Joined</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {members.map((m) => (
                  <tr key={m.user_id} data-member={m.email}>
                    <td data-label="Email">{m.email}</td>
                    <td data-label="Name">{m.name ? shownName(m.name) : '—'}</td>
                    <td data-label="Role">
                      {mayManage(m.role) ? (
                        <RoleChange
                          key={`${m.user_id}:${m.role}`}
                          team={team}
                          member={m}
                          roles={roles}
                          keyRoles={me.key_roles}
                          onChanged={(text) => {
                            setNotice(text);
                            refresh();
                          }}
                        />
                      ) : (
                        <span class="role">{m.role}</span>
                      )}
                    </td>
                    <td data-label="Joined">{when(m.joined_at)}</td>
                    <td class="actions">
                      {mayManage(m.role) && m.user_id !== me.user.id && (
                        <button type="button" class="danger small" onClick={() => setRemoving(m)}>
                          Remove<span class="sr-only"> {m.email}</span>
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
      {canInvite && <Invitations team={team} roles={ROLES.filter((r) => r !== 'owner' || canOwners)} />}
      {removing && (
        <ConfirmDialog
          title={`Remove ${removing.email}?`}
          action={`Remove ${removing.email}`}
          act={() => removeMember(team.id, removing.user_id)}
          onDone={() => {
            setNotice(`${removing.email} was removed from team ${shownName(team.name)}.`);
            setRemoving(null);
            refresh();
          }}
          onCancel={() => setRemoving(null)}
        >
          Their keys and sessions stop working in team {shownName(team.name)} at once.
        </ConfirmDialog>
      )}
      <details class="more">
        <summary>Create another team</summary>
        <CreateTeam onCreated={onCreated} />
      </details>
    </>
  );
}

function Invitations({ team, roles }: { team: Team; roles: readonly string[] }) {
  const list = useLoad(() => listInvitations(team.id), [team.id]);
  const [error, setError] = useState<string | null>(null);
  const [role, setRole] = useState('member');
  const [email, setEmail] = useState('');
  const [busy, setBusy] = useState(false);
  const [link, setLink] = useState<string | null>(null);

  const refresh = list.reload;

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const made = await createInvitation(team.id, role, email.trim());
      setLink(made.link);
      setEmail('');
      refresh();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const revoke = async (inv: Invitation) => {
    setError(null);
    try {
      await revokeInvitation(team.id, inv.id);
    } catch (err) {
      setError((err as Error).message);
    }
    refresh();
  };

  return (
    <section aria-labelledby="invitations-title" class="section">
      <h2 id="invitations-title">Invitations</h2>
      <form class="create invite" onSubmit={submit}>
        <div class="row">
          <div class="field">
            <label for="invite-role">Role</label>
            <select id="invite-role" value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value)}>
              {roles.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </div>
          <div class="field grow">
            <label for="invite-email">Email (optional: only this person may use it)</label>
            <input id="invite-email"
              type="email"
              autoComplete="off"
              value={email}
              onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
            />
          </div>
          <button type="submit" disabled={busy}>
            Create invitation
          </button>
        </div>
      </form>
      {link && <InviteLink link={link} onDone={() => setLink(null)} />}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <Loading state={list} what="the invitations">
        {(list) => (
        <div class="scroll" role="region" aria-label="Invitations" tabIndex={0}>
          <table class="invitations cards">
            <thead>
              <tr>
                <th scope="col">Role</th>
                <th scope="col">For</th>
                <th scope="col">State</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.length === 0 && (
                <tr>
                  <td colSpan={6} class="muted">
                    No invitations yet.
                  </td>
                </tr>
              )}
              {list.map((inv) => (
                <tr key={inv.id} data-invitation={inv.id}>
                  <td data-label="Role">{inv.role}</td>
                  <td data-label="For">{inv.email || 'anyone with the link'}</td>
                  <td data-label="State">
                    <span class={`state state-${inv.state}`}>{inv.state}</span>
                    {inv.accepted_by && <span class="muted small"> by {inv.accepted_by}</span>}
                  </td>
                  <td data-label="Created">{when(inv.created_at)}</td>
                  <td data-label="Expires">{when(inv.expires_at)}</td>
                  <td class="actions">
                    {inv.state === 'pending' && (
                      <button type="button" class="danger small" onClick={() => revoke(inv)}>
                        Revoke<span class="sr-only"> the {inv.role} invitation</span>
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
    </section>
  );
}

function InviteLink({ link, onDone }: { link: string; onDone: () => void }) {
  return (
    <ShownOnce
      title="Invitation link"
      warning="Copy this link now and send it to the person you invite. It will not be shown again."
      value={link}
      what="link"
      copyLabel="Copy link"
      doneLabel="Done"
      valueData={{ 'data-invite-link': '' }}
      onDone={onDone}
    />
  );
}

