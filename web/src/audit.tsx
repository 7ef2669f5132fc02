// The team's audit log, newest first, a page of 50 at a time (for owners and admins: read_audit).
import { useState } from 'preact/hooks';
import { auditLog, type Team } from './api';
import { shownName, when } from './format';
import { Loading, useLoad } from './load';
import { Pager } from './pager';

export function AuditPage({ team }: { team: Team }) {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const log = useLoad(() => auditLog(team.id, cursor), [team.id, cursor]);

  return (
    <>
      <h1>Audit log</h1>
      <p class="muted">
        Every change to team <strong>{shownName(team.name)}</strong>, newest first.
      </p>
      <Loading state={log} what="the audit log">
        {(page) => (
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
      </Loading>
      <Pager cursors={cursors} next={log.data?.next_cursor} onChange={setCursors} />
    </>
  );
}
