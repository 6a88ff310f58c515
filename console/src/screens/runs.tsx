import { useState } from 'preact/hooks';
import { useCaller } from '../auth.js';
import { Pager, usePage } from '../components/pager.js';
import { Notice, StatusBadge, Time } from '../components/ui.js';
import { useLoad } from '../hooks.js';
import { href } from '../router.js';
import type { RunStatus } from '../types.js';

/** The status filter's choices: failed first, the one an operator looks for first. */
const STATUSES: RunStatus[] = ['failed', 'running', 'interrupted', 'queued', 'cancelled', 'completed'];

/** Every run of the tenant, newest first, filtered by status and agent, a page at a time. */
export function Runs() {
  const { api } = useCaller();
  const [status, setStatus] = useState<RunStatus | ''>('');
  const [agent, setAgent] = useState('');
  const [page, setPage] = useState(0);
  const agents = useLoad(() => api.agents(), []);
  const queue = useLoad(() => api.queue(), []);
  const runs = usePage(
    (limit, offset) => api.allRuns({ ...(status ? { status } : {}), ...(agent ? { agent_id: agent } : {}), limit, offset }),
    page,
    [status, agent],
  );
  const filtered = [status, agent].filter(Boolean).join(', ');

  return (
    <section aria-labelledby="runs-title">
      <h1 id="runs-title" tabIndex={-1}>
        Runs
      </h1>
      {queue.data ? (
        <p data-testid="tenant-queue">
          Queue of {queue.data.tenant}: {queue.data.queued} waiting for a worker
          {queue.data.max_queued ? ` (at most ${queue.data.max_queued})` : ''}, {queue.data.running} running
          {queue.data.max_running ? ` (at most ${queue.data.max_running})` : ''}.
        </p>
      ) : null}
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <div class="field inline">
          <label for="run-status-filter">Status</label>
          <select
            id="run-status-filter"
            value={status}
            onChange={(e) => {
              setStatus((e.currentTarget as HTMLSelectElement).value as RunStatus | '');
              setPage(0);
            }}
          >
            <option value="">All statuses</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div class="field inline">
          <label for="run-agent-filter">Agent</label>
          <select
            id="run-agent-filter"
            value={agent}
            onChange={(e) => {
              setAgent((e.currentTarget as HTMLSelectElement).value);
              setPage(0);
            }}
          >
            <option value="">All agents</option>
            {(agents.data ?? []).map((a) => (
              <option key={a.id} value={a.id}>
                {a.id}
              </option>
            ))}
          </select>
        </div>
        <button
          type="button"
          onClick={() => {
            runs.reload();
            queue.reload();
          }}
        >
          Refresh
        </button>
      </form>
      {runs.error ? <Notice kind="error">{runs.error}</Notice> : null}
      {agents.error ? <Notice kind="error">{agents.error}</Notice> : null}
      {!runs.data && runs.loading ? <p>Loading…</p> : null}
      {runs.data && runs.rows.length === 0 ? <p class="empty">No run{filtered ? ` (${filtered})` : ''} on this page.</p> : null}
      {runs.rows.length > 0 ? (
        <table class="list" aria-label={`Runs${filtered ? ` (${filtered})` : ''}, newest first, page ${page + 1}`}>
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Status</th>
              <th scope="col">Agent</th>
              <th scope="col">Session</th>
              <th scope="col">Created</th>
              <th scope="col">Updated</th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody>
            {runs.rows.map((run) => (
              <tr key={run.id} data-run={run.id}>
                <td>
                  <code>{run.id}</code>
                </td>
                <td>
                  <StatusBadge status={run.status} />
                </td>
                <td>{run.agent_id}</td>
                <td>
                  <a href={href({ screen: 'session', sessionId: run.session_id })}>{run.session_id}</a>
                </td>
                <td>
                  <Time iso={run.created_at} />
                </td>
                <td>
                  <Time iso={run.updated_at} />
                </td>
                <td>{run.error ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <Pager label="runs" page={page} more={runs.more} onPage={setPage} />
    </section>
  );
}
