import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { useCaller } from '../auth.js';
import { Notice, StatusBadge, Time, useAction } from '../components/ui.js';
import { inZone } from '../cron.js';
import { useLoad } from '../hooks.js';
import { href } from '../router.js';
import type { Schedule } from '../types.js';

/** Schedules, newest first, with their fire history and deletion (two steps). */
export function Schedules() {
  const { api, canWrite } = useCaller();
  const schedules = useLoad(() => api.schedules(), []);
  const [open, setOpen] = useState<string | undefined>();
  const [confirming, setConfirming] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const action = useAction();

  const remove = (schedule: Schedule) =>
    action.run(async () => {
      await api.deleteSchedule(schedule.id);
      setConfirming(undefined);
      setNotice(`Schedule ${schedule.id} deleted.`);
      schedules.reload();
    });

  return (
    <section aria-labelledby="schedules-title">
      <div class="title-row">
        <h1 id="schedules-title" tabIndex={-1}>
          Schedules
        </h1>
        {canWrite ? (
          <a class="button primary" href={href({ screen: 'schedule-new' })}>
            New schedule
          </a>
        ) : null}
      </div>
      {notice ? <Notice kind="success">{notice}</Notice> : null}
      {action.error ? <Notice kind="error">{action.error}</Notice> : null}
      {schedules.error ? <Notice kind="error">{schedules.error}</Notice> : null}
      {schedules.data?.length === 0 ? <p class="empty">No schedule.</p> : null}
      {schedules.data && schedules.data.length > 0 ? (
        <table class="list" aria-label="Schedules, newest first">
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Cron</th>
              <th scope="col">Time zone</th>
              <th scope="col">Next run</th>
              <th scope="col">Session</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {schedules.data.map((s) => (
              <Fragment key={s.id}>
                <tr data-schedule={s.id}>
                  <td>{s.agent_id}</td>
                  <td>
                    <code>{s.cron_expr}</code>
                  </td>
                  <td>{s.timezone}</td>
                  <td data-testid="next-run">
                    <time dateTime={s.next_run}>{inZone(new Date(s.next_run), s.timezone)}</time>
                  </td>
                  <td>{s.new_session ? 'new each fire' : s.session_id ? <a href={href({ screen: 'session', sessionId: s.session_id })}>{s.session_id}</a> : 'one, reused'}</td>
                  <td class="actions">
                    <button type="button" aria-expanded={open === s.id} onClick={() => setOpen(open === s.id ? undefined : s.id)}>
                      History
                    </button>
                    {canWrite && confirming !== s.id ? (
                      <button type="button" class="danger" onClick={() => setConfirming(s.id)}>
                        Delete
                      </button>
                    ) : null}
                    {canWrite && confirming === s.id ? (
                      <>
                        <button type="button" class="danger" disabled={action.busy} onClick={() => void remove(s)}>
                          Confirm delete
                        </button>
                        <button type="button" onClick={() => setConfirming(undefined)}>
                          Keep
                        </button>
                      </>
                    ) : null}
                  </td>
                </tr>
                {open === s.id ? (
                  <tr class="expanded">
                    <td colSpan={6}>
                      <ScheduleHistory id={s.id} />
                    </td>
                  </tr>
                ) : null}
              </Fragment>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

function ScheduleHistory({ id }: { id: string }) {
  const { api } = useCaller();
  const history = useLoad(() => api.scheduleHistory(id), [id]);
  if (history.error) return <Notice kind="error">{history.error}</Notice>;
  if (!history.data) return <p>Loading the history…</p>;
  if (history.data.length === 0) return <p class="empty">Not fired yet.</p>;
  return (
    <table class="list" aria-label={`Fires of schedule ${id}, newest first`}>
      <thead>
        <tr>
          <th scope="col">Fired</th>
          <th scope="col">Due</th>
          <th scope="col">Status</th>
          <th scope="col">Session</th>
          <th scope="col">Error</th>
        </tr>
      </thead>
      <tbody>
        {history.data.map((r) => (
          <tr key={`${r.fired_at}-${r.session_id}`}>
            <td>
              <Time iso={r.fired_at} />
            </td>
            <td>
              <Time iso={r.due_at} />
            </td>
            <td>
              <StatusBadge status={r.status} />
            </td>
            <td>
              <a href={href({ screen: 'session', sessionId: r.session_id })}>{r.session_id}</a>
            </td>
            <td>{r.error ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
