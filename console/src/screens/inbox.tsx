import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { useCaller } from '../auth.js';
import { LiveBadge, Notice, Relative, Time } from '../components/ui.js';
import { useEventStream, useLoad } from '../hooks.js';
import { href, navigate } from '../router.js';
import type { Approval, ApprovalRequest, RunEvent } from '../types.js';
import { ApprovalDetail, type Decision } from './approval.js';
import { ApprovalTabs } from './decided.js';

/** Events after which the pending list may differ. */
const CHANGES_PENDING = new Set(['interrupted', 'approval_decided', 'cancelled', 'failed', 'completed']);
/** Replaying from the first retained event: a viewer's inbox is folded from the event log. */
const FROM_START = '0-0';
/** At most this many GET /api/approvals/{id} at once while a viewer's inbox fills in. */
const DETAIL_CALLS = 4;

/**
 * The approvals inbox: pending requests of the tenant, oldest first, live. A user (and admin)
 * reads GET /api/approval/pending and reloads it when an event may have changed it, including
 * the events missed while reconnecting (the stream resumes). A viewer may not read that list
 * (403 by the contract), so its read-only inbox is folded from the tenant's retained events
 * (every `interrupted` whose approval was not decided and whose run did not end), each request
 * then read by id for what events do not carry: the prompt, the time asked, the expiry.
 */
export function Inbox({ approvalId }: { approvalId: string | undefined }) {
  const caller = useCaller();
  const listed = caller.canListPending;
  const pending = useLoad(() => (listed ? caller.api.pending() : Promise.resolve([])), [listed]);
  const [folded, setFolded] = useState<Approval[]>([]);
  const [decision, setDecision] = useState<Decision | undefined>();
  const reloadSoon = useRef<number | undefined>(undefined);

  const onEvent = (_id: string, event: RunEvent) => {
    if (!CHANGES_PENDING.has(event.type)) return;
    if (listed) {
      // Several events in a burst: one reload.
      clearTimeout(reloadSoon.current);
      reloadSoon.current = window.setTimeout(pending.reload, 50);
      return;
    }
    setFolded((items) => fold(items, event));
  };
  const stream = useEventStream(onEvent, listed ? {} : { from: FROM_START });
  // Each (re)connection may have followed changes the stream did not carry yet: read the list again.
  useEffect(() => {
    if (listed && stream.status === 'live') pending.reload();
  }, [stream.status]);
  useEffect(() => () => clearTimeout(reloadSoon.current), []);

  const detailed = useDetails(folded, !listed);
  const items = listed ? (pending.data ?? []) : detailed;
  const open = approvalId ? items.find((a) => a.id === approvalId) : undefined;

  const decided = (d: Decision) => {
    setDecision(d);
    pending.reload();
    navigate({ screen: 'inbox' });
  };

  return (
    <section aria-labelledby="inbox-title">
      <div class="title-row">
        <h1 id="inbox-title" tabIndex={-1}>
          Approvals
        </h1>
        <LiveBadge status={stream.status} />
      </div>
      <ApprovalTabs current="inbox" />
      {!caller.canWrite ? (
        <Notice kind="info">
          Read-only: your role (viewer) can see what waits for a decision but cannot answer.
        </Notice>
      ) : null}
      {stream.error ? <Notice kind="error">Live updates stopped: {stream.error}</Notice> : null}
      {pending.error ? <Notice kind="error">{pending.error}</Notice> : null}
      {decision ? (
        <Notice kind="success">
          {decision.status === 'approved' ? 'Approved' : 'Rejected'} {decision.id}; its run resumes.{' '}
          <a href={href({ screen: 'session', sessionId: decision.session_id })}>Open session {decision.session_id}</a>
        </Notice>
      ) : null}
      <div class="inbox">
        <ApprovalTable items={items} selected={approvalId} loading={listed && pending.loading && !pending.data} />
        {approvalId ? (
          open ? (
            <ApprovalDetail key={open.id} approval={open} onDecided={decided} />
          ) : !pending.loading ? (
            <Notice kind="info">
              Approval {approvalId} is not pending (any more). <a href={href({ screen: 'inbox' })}>Back to the inbox</a>
            </Notice>
          ) : null
        ) : null}
      </div>
    </section>
  );
}

function ApprovalTable({ items, selected, loading }: { items: Approval[]; selected: string | undefined; loading: boolean }) {
  if (loading) return <p>Loading the pending approvals…</p>;
  if (items.length === 0) return <p class="empty">Nothing waits for a decision. New requests appear here as they come.</p>;
  return (
    <table class="list" aria-label="Pending approvals, oldest first">
      <thead>
        <tr>
          <th scope="col">Prompt</th>
          <th scope="col">Agent</th>
          <th scope="col">Session</th>
          <th scope="col">Requested</th>
          <th scope="col">Expires</th>
          <th scope="col">
            <span class="sr-only">Open</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {items.map((a) => (
          <tr key={a.id} data-approval={a.id} aria-current={a.id === selected ? 'true' : undefined} class={a.id === selected ? 'selected' : ''}>
            <td>{a.prompt ?? <span class="muted">(node {a.node_id})</span>}</td>
            <td>{a.agent_id}</td>
            <td>
              <a href={href({ screen: 'session', sessionId: a.session_id })}>{a.session_id}</a>
            </td>
            <td>
              <Relative iso={a.requested_at} />
            </td>
            <td>{a.expires_at ? <Time iso={a.expires_at} /> : <span class="muted">never</span>}</td>
            <td>
              <a class="button" href={href({ screen: 'inbox', approvalId: a.id })} aria-label={`Open approval ${a.id} of session ${a.session_id}`}>
                Open
              </a>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * A viewer's folded inbox with what the events leave out (prompt, requested_at, expiry), from
 * GET /api/approvals/{id}, which a viewer may read: each request once, at most DETAIL_CALLS at
 * a time. One the server already calls decided leaves the list; one it cannot answer now
 * stays as the events describe it.
 */
function useDetails(items: Approval[], enabled: boolean): Approval[] {
  const { api } = useCaller();
  const [details, setDetails] = useState<ReadonlyMap<string, ApprovalRequest | null>>(new Map());
  const asked = useRef(new Set<string>());
  const inFlight = useRef(0);
  useEffect(() => {
    if (!enabled) return;
    for (const item of items) {
      if (inFlight.current >= DETAIL_CALLS) break;
      if (asked.current.has(item.id)) continue;
      asked.current.add(item.id);
      inFlight.current += 1;
      void api
        .approval(item.id)
        .catch(() => null)
        .then((detail) => {
          inFlight.current -= 1;
          setDetails((known) => new Map(known).set(item.id, detail));
        });
    }
  }, [items, details, enabled]);
  return useMemo(
    () =>
      items.flatMap((item) => {
        const detail = details.get(item.id);
        if (!detail) return [item];
        if (detail.status !== 'pending') return [];
        const { status: _status, comment: _comment, decided_at: _at, decided_by: _by, ...request } = detail;
        return [{ ...item, ...request }];
      }),
    [items, details],
  );
}

/** The pending approvals after `event`, for the inbox folded from events (oldest first). */
export function fold(items: Approval[], event: RunEvent): Approval[] {
  if (event.type === 'interrupted' && event.approval_id) {
    if (items.some((a) => a.id === event.approval_id)) return items;
    const approval: Approval = {
      id: event.approval_id,
      session_id: event.session,
      node_id: event.node ?? '',
      requested_at: event.ts,
      run_id: event.run_id,
      agent_id: event.agent_id,
    };
    return [...items, approval];
  }
  if (event.type === 'approval_decided') return items.filter((a) => a.id !== event.approval_id);
  return items.filter((a) => a.run_id !== event.run_id);
}
