// The team's audit log, newest first, a page of 50 at a time (for owners and admins: read_audit).
import { useEffect, useState } from 'preact/hooks';
import { auditLog, type AuditEntry, type Team } from './api';
import { shownName, when } from './format';
import { Pager } from './pager';

export function AuditPage({ team }: { team: Team }) {
  const [cursors, setCursors] = useState<string[]>([]);
  const [page, setPage] = useState<{ data: AuditEntry[]; next_cursor: string | null } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const cursor = cursors[cursors.length - 1];

  useEffect(() => {
    setPage(null);
    auditLog(team.id, cursor).then(setPage, (e: Error) => setError(e.message));
  }, [team.id, cursor]);

  return (
    <>
      <h1>Audit log</h1>
      <p class="muted">
        Every change to team <strong>{shownName(team.name)}</strong>, newest first.
      </p>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {page === null && !error && <p class="muted">Loading…</p>}
      {page && (
        <div class="scroll" role="region" aria-label="Audit log" tabIndex={0}>
          <table class="audit cards">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Actor</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Source</th>
              </tr>
            </thead>
            <tbody>
              {page.data.length === 0 && (
                <tr>
                  <td colSpan={5} class="muted">
                    Nothing yet.
                  </td>
                </tr>
              )}
              {page.data.map((a) => (
                <tr key={a.id}>
                  <td data-label="Time" class="nowrap">
                    {when(a.at)}
                  </td>
                  <td data-label="Actor">{a.actor}</td>
                  <td data-label="Action">
                    <code class="nowrap">{a.action}</code>
                  </td>
                  <td data-label="Target">{a.target || '—'}</td>
                  <td data-label="Source">{a.source}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager cursors={cursors} next={page?.next_cursor} onChange={setCursors} />
    </>
  );
}
