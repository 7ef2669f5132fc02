// A form that creates a team; the caller becomes its owner.
import { useState } from 'preact/hooks';
import { createTeam } from './api';

export function CreateTeam({ onCreated }: { onCreated: (teamId: string) => void }) {
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const made = await createTeam(name.trim());
      onCreated(made.id);
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };
  return (
    <form class="create" onSubmit={submit}>
      <label for="team-name">New team's name</label>
      <div class="row">
        <input
          id="team-name"
          required
          maxLength={100}
          autoComplete="off"
          value={name}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={busy || name.trim() === ''}>
          Create team
        </button>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </form>
  );
}
