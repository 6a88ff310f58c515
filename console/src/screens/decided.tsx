import { useState } from 'preact/hooks';
import { useCaller } from '../auth.js';
import { Pager, usePage } from '../components/pager.js';
import { JsonDetails, Notice, StatusBadge, Time } from '../components/ui.js';
import { href } from '../router.js';
import type { ApprovalRequest } from '../types.js';

/** The two lists of approvals: what waits for a decision, and what was decided. */
export function ApprovalTabs({ current }: { current: 'inbox' | 'decided' }) {
  return (
    <nav class="tabs" aria-label="Approvals">
      <a href={href({ screen: 'inbox' })} aria-current={current === 'inbox' ? 'page' : undefined}>
        Pending
      </a>
      <a href={href({ screen: 'decided' })} aria-current={current === 'decided' ? 'page' : undefined}>
        Decided
      </a>
    </nav>
  );
}

/** Who decided, in words: `timeout` is the system at the request's expiry, `system` a run's end. */
function decider(approval: ApprovalRequest): string {
  if (approval.decided_by === 'timeout') return 'nobody: it expired';
  return approval.decided_by ?? '—';
}

/**
 * Decided approval requests, newest decision first (GET /api/approvals?status=decided): the
 * decision, who took it and when, with the comment and the JSON answer (`resume`) if any. The list needs the user role, like the
 * pending one: a viewer is told so.
 */
export function Decided() {
  const { api, canListPending } = useCaller();
  const [page, setPage] = useState(0);
  const decided = usePage((limit, offset) => (canListPending ? api.decided({ limit, offset }) : Promise.resolve([])), page, [canListPending]);

  return (
    <section aria-labelledby="decided-title">
      <h1 id="decided-title" tabIndex={-1}>
        Decided approvals
      </h1>
      <ApprovalTabs current="decided" />
      {!canListPending ? <Notice kind="info">Your role (viewer) cannot list decided approvals: the API lists them to users and admins.</Notice> : null}
      {decided.error ? <Notice kind="error">{decided.error}</Notice> : null}
      {canListPending && !decided.data && decided.loading ? <p>Loading…</p> : null}
      {canListPending && decided.data && decided.rows.length === 0 ? <p class="empty">No decided approval on this page.</p> : null}
      {decided.rows.length > 0 ? (
        <table class="list" aria-label={`Decided approvals, newest decision first, page ${page + 1}`}>
          <thead>
            <tr>
              <th scope="col">Decision</th>
              <th scope="col">Prompt</th>
              <th scope="col">Decided by</th>
              <th scope="col">Decided</th>
              <th scope="col">Comment</th>
              <th scope="col">Answer</th>
              <th scope="col">Agent</th>
              <th scope="col">Session</th>
            </tr>
          </thead>
          <tbody>
            {decided.rows.map((a) => (
              <tr key={a.id} data-approval={a.id}>
                <td>
                  <StatusBadge status={a.status} />
                </td>
                <td>{a.prompt}</td>
                <td data-testid="decided-by">{decider(a)}</td>
                <td>
                  <Time iso={a.decided_at} />
                </td>
                <td data-testid="comment">{a.comment ?? <span class="muted">none</span>}</td>
                <td data-testid="resume">{a.resume !== undefined ? <JsonDetails value={a.resume} label={`Answer to ${a.id}`} /> : <span class="muted">none</span>}</td>
                <td>{a.agent_id}</td>
                <td>
                  <a href={href({ screen: 'session', sessionId: a.session_id })}>{a.session_id}</a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {canListPending ? <Pager label="decided approvals" page={page} more={decided.more} onPage={setPage} /> : null}
    </section>
  );
}
