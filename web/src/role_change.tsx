// A member's role on the Team page, changed by an explicit Save and a confirmation: the role
// picked in the select is only a draft (stepping through the options with the arrow keys saves
// nothing), and the confirmation says how many of the member's keys stop working, or work again,
// with the new role (`key_roles` from `me`: the roles whose keys work).
import { useState } from 'preact/hooks';
import { changeRole, listKeys, type Member, type Team } from './api';
import { ConfirmDialog } from './confirm';
import { article, shownName } from './format';

interface Props {
  team: Team;
  member: Member;
  /** The roles the caller may give. */
  roles: readonly string[];
  /** The roles whose keys work. */
  keyRoles: readonly string[];
  /** After the change, with a sentence saying what was done. */
  onChanged: (notice: string) => void;
}

export function RoleChange({ team, member, roles, keyRoles, onChanged }: Props) {
  const [draft, setDraft] = useState(member.role);
  const [effect, setEffect] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const who = member.name ? shownName(member.name) : member.email;

  const review = async () => {
    setError(null);
    try {
      setEffect(await keysEffect(team.id, member, draft, keyRoles, who));
    } catch (e) {
      setError((e as Error).message);
    }
  };

  return (
    <div class="row role-change">
      <select aria-label={`Role of ${member.email}`} value={draft} onChange={(e) => setDraft((e.target as HTMLSelectElement).value)}>
        {roles.map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
      {draft !== member.role && (
        <button type="button" class="small" onClick={review}>
          Save<span class="sr-only"> the role of {member.email}</span>
        </button>
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {effect !== null && (
        <ConfirmDialog
          title={`Make ${member.email} ${article(draft)} ${draft}?`}
          action={`Make ${article(draft)} ${draft}`}
          act={() => changeRole(team.id, member.user_id, draft)}
          onDone={() => {
            setEffect(null);
            onChanged(`${member.email} is now ${article(draft)} ${draft} of team ${shownName(team.name)}.`);
          }}
          onCancel={() => setEffect(null)}
        >
          <span data-role-effect>
            {member.email} becomes {article(draft)} {draft} of team {shownName(team.name)} at once.
            {effect && ` ${effect}`}
          </span>
        </ConfirmDialog>
      )}
    </div>
  );
}

/** What `member` becoming `to` does to their keys, in a sentence ("carol's 2 keys stop working
 * now."); empty when nothing changes for them. */
async function keysEffect(teamId: string, member: Member, to: string, keyRoles: readonly string[], who: string) {
  const before = keyRoles.includes(member.role);
  const after = keyRoles.includes(to);
  if (before === after) return '';
  const theirs = (await listKeys(teamId)).filter((k) => k.created_by === member.email);
  const n = before
    ? theirs.filter((k) => k.state === 'active').length
    : theirs.filter((k) => k.state === 'inactive' && k.inactive_reason === 'creator_role').length;
  if (n === 0) return '';
  const keys = `${who}'s ${n} ${n === 1 ? 'key' : 'keys'}`;
  if (before) return `${keys} ${n === 1 ? 'stops' : 'stop'} working now.`;
  return `${keys} ${n === 1 ? 'works' : 'work'} again.`;
}
