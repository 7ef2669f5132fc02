// A panel's data as it loads: `useLoad` calls the API (again when its inputs change, or on
// Retry), and `Loading` shows the panel, a "Loading…" line, or what failed with a Retry button,
// so that a network failure never leaves a panel loading for ever.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  /** Loads again, keeping what is shown until the answer comes. */
  reload: () => void;
}

/** `load()`'s answer; called again when `deps` change (the data shown is cleared then) and on
 * reload. Only the latest call's answer is kept. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [attempt, setAttempt] = useState(0);
  useEffect(() => setData(null), deps);
  useEffect(() => {
    let latest = true;
    setError(null);
    load().then(
      (d) => latest && setData(d),
      (e: Error) => latest && setError(e.message),
    );
    return () => {
      latest = false;
    };
  }, [...deps, attempt]);
  return { data, error, reload: () => setAttempt((n) => n + 1) };
}

interface Props<T> {
  state: Loaded<T>;
  /** What the panel shows, in words: "the keys". */
  what: string;
  children: (data: T) => ComponentChildren;
}

/** The panel once its data is in; until then "Loading…", or the failure and a Retry button. */
export function Loading<T>({ state, what, children }: Props<T>) {
  if (state.error !== null) return <Failed what={what} error={state.error} onRetry={state.reload} />;
  if (state.data === null) return <p class="muted">Loading {what}…</p>;
  return <>{children(state.data)}</>;
}

/** What could not be loaded and why, with a button that tries again. */
export function Failed({ what, error, onRetry }: { what: string; error: string; onRetry: () => void }) {
  return (
    <div class="failed" data-failed>
      <p role="alert" class="error">
        Could not load {what}: {error}
      </p>
      <button type="button" class="small" onClick={onRetry}>
        Retry<span class="sr-only"> loading {what}</span>
      </button>
    </div>
  );
}
