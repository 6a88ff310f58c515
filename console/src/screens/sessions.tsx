import { useState } from 'preact/hooks';
import { useCaller } from '../auth.js';
import { Pager, usePage } from '../components/pager.js';
import { Notice, StatusBadge, Time } from '../components/ui.js';
import { useLoad } from '../hooks.js';
import { href } from '../router.js';
import type { Run, Session } from '../types.js';

/** A session of the list with its latest run (undefined when it could not be read). */
type Row = Session & { latest?: Run | undefined };

/**
 * Sessions, newest first, filtered by agent, a page at a time, each with its latest run's
 * status; or the one session whose exact id was searched (GET /api/sessions?session_id=).
 */
export function Sessions() {
  const { api } = useCaller();
  const [agent, setAgent] = useState('');
  const [page, setPage] = useState(0);
  const [typed, setTyped] = useState('');
  const [search, setSearch] = useState('');
  const agents = useLoad(() => api.agents(), []);
  const sessions = usePage<Row>(
    async (limit, offset) => {
      const query = search ? { session_id: search } : agent ? { agent_id: agent } : {};
      const found = await api.sessions({ ...query, limit, offset });
      // One small read per shown row (the page's extra row only tells whether more follow).
      const latest = await Promise.all(found.slice(0, limit - 1).map((s) => api.runs(s.id, 1).then((runs) => runs[0], () => undefined)));
      return found.map((s, i) => ({ ...s, latest: latest[i] }));
    },
    page,
    [agent, search],
  );

  const find = (event: Event) => {
    event.preventDefault();
    setSearch(typed.trim());
    setPage(0);
  };

  return (
    <section aria-labelledby="sessions-title">
      <h1 id="sessions-title" tabIndex={-1}>
        Sessions
      </h1>
      <form class="filters" role="search" aria-label="Sessions" onSubmit={find}>
        <div class="field inline">
          <label for="session-search">Session id</label>
          <input id="session-search" value={typed} autoComplete="off" onInput={(e) => setTyped((e.currentTarget as HTMLInputElement).value)} />
        </div>
        <button type="submit">Find</button>
        {search ? (
          <button
            type="button"
            onClick={() => {
              setTyped('');
              setSearch('');
              setPage(0);
            }}
          >
            Show all sessions
          </button>
        ) : null}
        <div class="field inline">
          <label for="agent-filter">Agent</label>
          <select
            id="agent-filter"
            value={agent}
            disabled={!!search}
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
      {sessions.data && sessions.rows.length === 0 ? (
        <p class="empty">{search ? `No session has the id "${search}" (the search takes an exact id).` : `No session${agent ? ` of ${agent}` : ''} on this page.`}</p>
      ) : null}
      {sessions.rows.length > 0 ? (
        <table class="list" aria-label={search ? `The session ${search}` : `Sessions, newest first, page ${page + 1}`}>
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col">Agent</th>
              <th scope="col">Latest run</th>
              <th scope="col">Created</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {sessions.rows.map((s) => (
              <tr key={s.id} data-session={s.id}>
                <td>
                  <a href={href({ screen: 'session', sessionId: s.id })}>{s.id}</a>
                </td>
                <td>{s.agent_id}</td>
                <td data-testid="run-status">{s.latest ? <StatusBadge status={s.latest.status} /> : <span class="muted">—</span>}</td>
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
      {search ? null : <Pager label="sessions" page={page} more={sessions.more} onPage={setPage} />}
    </section>
  );
}
