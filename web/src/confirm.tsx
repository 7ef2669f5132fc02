// A modal confirmation for an action that cannot be undone (revoking a key, removing a member):
// its title names what it acts on, Cancel has the focus, and the action's failure is shown in
// the dialog.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

interface Props {
  title: string;
  action: string; // the danger button's label
  act: () => Promise<unknown>;
  onDone: () => void;
  onCancel: () => void;
  children: ComponentChildren;
}

export function ConfirmDialog({ title, action, act, onDone, onCancel, children }: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const d = dialog.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  const confirm = async () => {
    setBusy(true);
    try {
      await act();
      onDone();
    } catch (e) {
      setError((e as Error).message);
      setBusy(false);
    }
  };
  return (
    <dialog ref={dialog} aria-labelledby="confirm-title" onCancel={onCancel}>
      <h2 id="confirm-title">{title}</h2>
      <p>{children}</p>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="row end">
        <button type="button" class="quiet" onClick={onCancel} autoFocus>
          Cancel
        </button>
        <button type="button" class="danger" onClick={confirm} disabled={busy}>
          {action}
        </button>
      </div>
    </dialog>
  );
}
