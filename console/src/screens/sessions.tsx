import { useState } from 'preact/hooks';
import { useCaller } from '../auth.js';
import { Notice, Time } from '../components/ui.js';
import { useLoad } from '../hooks.js';
import { href } from '../router.js';

const PAGE = 20;

/** Sessions, newest first, filtered by agent, a page at a time (one extra row says whether more follow). */
export function Sessions() {
  const { api } = useCaller();
  const [agent, setAgent] = useState('');
  const [page, setPage] = useState(0);
  const agents = useLoad(() => api.agents(), []);
  const sessions = useLoad(
    () => api.sessions({ ...(agent ? { agent_id: agent } : {}), limit: PAGE + 1, offset: page * PAGE }),
    [agent, page],
  );
  const rows = sessions.data?.slice(0, PAGE) ?? [];
  const more = (sessions.data?.length ?? 0) > PAGE;

  return (
    <section aria-labelledby="sessions-title">
      <h1 id="sessions-title" tabIndex={-1}>
        Sessions
      </h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <div class="field inline">
          <label for="agent-filter">Agent</label>
          <select
            id="agent-filter"
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
        <button type="button" onClick={sessions.reload}>
          Refresh
        </button>
      </form>
      {sessions.error ? <Notice kind="error">{sessions.error}</Notice> : null}
      {agents.error ? <Notice kind="error">{agents.error}</Notice> : null}
      {!sessions.data && sessions.loading ? <p>Loading…</p> : null}
      {sessions.data && rows.length === 0 ? <p class="empty">No session{agent ? ` of ${agent}` : ''} on this page.</p> : null}
      {rows.length > 0 ? (
        <table class="list" aria-label={`Sessions, newest first, page ${page + 1}`}>
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col">Agent</th>
              <th scope="col">Created</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((s) => (
              <tr key={s.id} data-session={s.id}>
                <td>
                  <a href={href({ screen: 'session', sessionId: s.id })}>{s.id}</a>
                </td>
                <td>{s.agent_id}</td>
                <td>
                  <Time iso={s.created_at} />
                </td>
                <td>
                  <Time iso={s.updated_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <nav class="pager" aria-label="Pages of sessions">
        <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
          Previous page
        </button>
        <span>Page {page + 1}</span>
        <button type="button" disabled={!more} onClick={() => setPage(page + 1)}>
          Next page
        </button>
      </nav>
    </section>
  );
}
