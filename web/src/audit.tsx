// The team's audit log, newest first, a page of 50 at a time, and the latest deliveries of its
// balance alerts to the configured webhook (for owners and admins: read_audit).
import { useState } from 'preact/hooks';
import { alertDeliveries, auditLog, type AlertDelivery, type Team } from './api';
import { exactMoney, shownName, when } from './format';
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
      <AlertDeliveries team={team} />
    </>
  );
}

/** "delivered", "failed" or "next try 10:04:05", with the receiver's last status. */
function deliveryState(a: AlertDelivery): string {
  const state = a.state === 'pending' ? `next try ${when(a.next_attempt_at)}` : a.state;
  return a.last_status === null ? state : `${state} (last status ${a.last_status})`;
}

/** The team's 20 latest balance alerts and what became of their delivery. */
function AlertDeliveries({ team }: { team: Team }) {
  const alerts = useLoad(() => alertDeliveries(team.id), [team.id]);
  return (
    <>
      <h2>Balance alerts</h2>
      <p class="muted">
        Each time the balance fell below an amount the operator configured, an event was sent to
        their webhook. The latest 20, newest first.
      </p>
      <Loading state={alerts} what="the balance alerts">
        {(page) => (
          <div class="scroll" role="region" aria-label="Balance alerts" tabIndex={0}>
            <table class="audit cards">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Below</th>
                  <th scope="col">Balance after</th>
                  <th scope="col">Delivery</th>
                  <th scope="col">Attempts</th>
                </tr>
              </thead>
              <tbody>
                {page.data.length === 0 && (
                  <tr>
                    <td colSpan={5} class="muted">
                      None yet.
                    </td>
                  </tr>
                )}
                {page.data.map((a) => (
                  <tr key={a.id}>
                    <td data-label="Time" class="nowrap">
                      {when(a.created_at)}
                    </td>
                    <td data-label="Below">
                      {a.key !== undefined ? `${Math.round(a.threshold * 1e6) / 1e4} % of key ${a.key}'s budget` : exactMoney(a.threshold)}
                    </td>
                    <td data-label="Balance after">
                      {a.key !== undefined
                        ? `spent ${exactMoney(a.spend_usd ?? 0)} of ${exactMoney(a.budget_usd ?? 0)}`
                        : exactMoney(a.balance_usd ?? 0)}
                    </td>
                    <td data-label="Delivery">{deliveryState(a)}</td>
                    <td data-label="Attempts">{a.attempts}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Loading>
    </>
  );
}
