import { useEffect, useRef, useState } from 'preact/hooks';
import { useCaller } from '../auth.js';
import { EventFeed, type FeedEntry } from '../components/event-feed.js';
import { Timeline } from '../components/timeline.js';
import { JsonView, LiveBadge, Notice, StatusBadge, Time, useAction } from '../components/ui.js';
import { Waterfall } from '../components/waterfall.js';
import { eventIdBefore } from '../events.js';
import { useEventStream, useLoad } from '../hooks.js';
import type { Run, RunEvent } from '../types.js';

const ACTIVE = new Set(['queued', 'running', 'interrupted']);
/** Events after which runs, state, history or trace may have changed. */
const REFRESHING = new Set(['node_end', 'interrupted', 'approval_decided', 'completed', 'failed', 'cancelled']);

/**
 * One session: its runs (cancel, resume), current state, checkpoint timeline with diffs, trace
 * waterfall and live event feed. The feed replays the session's retained events from just
 * before its oldest listed run, then follows live ones; each event that may change the rest
 * refreshes it.
 */
export function SessionPage({ sessionId }: { sessionId: string }) {
  const { api, canWrite } = useCaller();
  const runs = useLoad(() => api.runs(sessionId), [sessionId]);
  const state = useLoad(() => api.state(sessionId), [sessionId]);
  const traces = useLoad(() => api.traces(sessionId), [sessionId]);
  // The session itself: its metadata names the LangGraph assistant of its latest run, when a LangGraph client ran it.
  const session = useLoad(async () => (await api.sessions({ session_id: sessionId, limit: 1, offset: 0 }))[0], [sessionId]);
  const [historyVersion, setHistoryVersion] = useState(0);
  const [feed, setFeed] = useState<FeedEntry[]>([]);
  const [from, setFrom] = useState<string | undefined>();
  const [started, setStarted] = useState(false);
  const refreshSoon = useRef<number | undefined>(undefined);
  const action = useAction();
  const [notice, setNotice] = useState<string | undefined>();

  const refresh = () => {
    runs.reload();
    session.reload();
    state.reload();
    traces.reload();
    setHistoryVersion((v) => v + 1);
  };

  // The replay starts once the runs are known, from just before the oldest of them.
  useEffect(() => {
    if (started || !runs.data) return;
    const oldest = runs.data.at(-1);
    if (oldest) setFrom(eventIdBefore(oldest.created_at));
    setStarted(true);
  }, [runs.data]);

  const onEvent = (id: string, event: RunEvent) => {
    setFeed((entries) => (entries.some((e) => e.id === id) ? entries : [...entries, { id, event }]));
    if (!REFRESHING.has(event.type)) return;
    clearTimeout(refreshSoon.current);
    refreshSoon.current = window.setTimeout(refresh, 100);
  };
  const stream = useEventStream(onEvent, { session: sessionId, ...(from ? { from } : {}), enabled: started });
  useEffect(() => () => clearTimeout(refreshSoon.current), []);

  const cancel = (run: Run) =>
    action.run(async () => {
      await api.cancelRun(run.id);
      setNotice(`Run ${run.id} cancelled.`);
      refresh();
    });
  const resume = () =>
    action.run(async () => {
      const ticket = await api.resume(sessionId);
      setNotice(`Resumed: run ${ticket.run_id} is ${ticket.status}.`);
      refresh();
    });

  const latest = runs.data?.[0];
  const checkpoint = state.data;
  const assistantId = session.data?.metadata.assistant_id;
  const canResume =
    canWrite && latest !== undefined && !ACTIVE.has(latest.status) && (latest.status !== 'completed' || checkpoint?.node_id !== '__end__');

  return (
    <section aria-labelledby="session-title">
      <div class="title-row">
        <h1 id="session-title" tabIndex={-1}>
          Session <code>{sessionId}</code>
        </h1>
        <LiveBadge status={stream.status} />
      </div>
      <dl class="facts">
        <dt>Agent</dt>
        <dd>{latest?.agent_id ?? '—'}</dd>
        {typeof assistantId === 'string' ? (
          <>
            <dt>Assistant</dt>
            <dd data-testid="session-assistant">
              <code>{assistantId}</code>
            </dd>
          </>
        ) : null}
        <dt>Latest run</dt>
        <dd data-testid="latest-status">{latest ? <StatusBadge status={latest.status} /> : '—'}</dd>
        <dt>Next node</dt>
        <dd>{checkpoint?.node_id ?? '—'}</dd>
        <dt>Checkpoint</dt>
        <dd data-testid="checkpoint-seq">{checkpoint?.seq_num ?? '—'}</dd>
      </dl>
      {notice ? <Notice kind="success">{notice}</Notice> : null}
      {action.error ? <Notice kind="error">{action.error}</Notice> : null}
      {runs.error ? <Notice kind="error">{runs.error}</Notice> : null}

      <section aria-labelledby="runs-title" class="card">
        <div class="title-row">
          <h2 id="runs-title">Runs</h2>
          {canResume ? (
            <button type="button" disabled={action.busy} onClick={() => void resume()}>
              Resume session
            </button>
          ) : null}
        </div>
        <RunsTable runs={runs.data ?? []} canCancel={canWrite} busy={action.busy} onCancel={(run) => void cancel(run)} />
      </section>

      <section aria-labelledby="state-title" class="card">
        <h2 id="state-title">Current state</h2>
        {state.error ? <Notice kind="error">{state.error}</Notice> : null}
        {checkpoint ? <JsonView value={checkpoint.state} label="Current state of the session" /> : null}
      </section>

      <Timeline sessionId={sessionId} version={historyVersion} />
      <Waterfall spans={traces.data ?? []} error={traces.error} />
      <EventFeed entries={feed} error={stream.error} />
    </section>
  );
}

/** A session's runs; *Cancel* asks for a confirmation first, as *Delete* does on a schedule. */
function RunsTable({ runs, canCancel, busy, onCancel }: { runs: Run[]; canCancel: boolean; busy: boolean; onCancel(run: Run): void }) {
  const [confirming, setConfirming] = useState<string | undefined>();
  if (runs.length === 0) return <p class="empty">No run.</p>;
  return (
    <table class="list" aria-label="Runs, newest first">
      <thead>
        <tr>
          <th scope="col">Run</th>
          <th scope="col">Status</th>
          <th scope="col">Created</th>
          <th scope="col">Updated</th>
          <th scope="col">Error</th>
          <th scope="col">
            <span class="sr-only">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {runs.map((run) => (
          <tr key={run.id} data-run={run.id}>
            <td>
              <code>{run.id}</code>
            </td>
            <td>
              <StatusBadge status={run.status} />
            </td>
            <td>
              <Time iso={run.created_at} />
            </td>
            <td>
              <Time iso={run.updated_at} />
            </td>
            <td>{run.error ?? ''}</td>
            <td class="actions">
              {canCancel && ACTIVE.has(run.status) && confirming !== run.id ? (
                <button type="button" class="danger" disabled={busy} aria-label={`Cancel run ${run.id}`} onClick={() => setConfirming(run.id)}>
                  Cancel
                </button>
              ) : null}
              {canCancel && ACTIVE.has(run.status) && confirming === run.id ? (
                <>
                  <button
                    type="button"
                    class="danger"
                    disabled={busy}
                    // The Cancel button it replaces had the focus: keep the keyboard where it was.
                    autoFocus
                    aria-label={`Confirm cancel of run ${run.id}`}
                    onClick={() => {
                      setConfirming(undefined);
                      onCancel(run);
                    }}
                  >
                    Confirm cancel
                  </button>
                  <button type="button" aria-label={`Keep run ${run.id}`} onClick={() => setConfirming(undefined)}>
                    Keep
                  </button>
                </>
              ) : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
