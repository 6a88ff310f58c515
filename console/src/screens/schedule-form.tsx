import { useMemo, useState } from 'preact/hooks';
import { useCaller } from '../auth.js';
import { JsonEditor, Notice, useAction } from '../components/ui.js';
import { checkCron, inZone, timeZones } from '../cron.js';
import { useLoad } from '../hooks.js';
import { parseJsonObject } from '../json.js';
import { href, navigate } from '../router.js';

/**
 * A new schedule: agent, cron expression checked as it is typed by the server's own rules
 * (the parser's reason shows before anything is sent), the next five fire times in the chosen
 * time zone, input JSON, and whether each fire starts a new session.
 */
export function ScheduleForm() {
  const { api, canWrite } = useCaller();
  const agents = useLoad(() => api.agents(), []);
  const zones = useMemo(timeZones, []);
  const [agent, setAgent] = useState('');
  const [cron, setCron] = useState('*/15 * * * *');
  const [timezone, setTimezone] = useState('UTC');
  const [input, setInput] = useState('{}');
  const [newSession, setNewSession] = useState(true);
  const action = useAction();

  const chosenAgent = agent || agents.data?.[0]?.id || '';
  const check = checkCron(cron, timezone.trim());
  const parsed = parseJsonObject(input);
  const valid = check.ok && parsed.ok && chosenAgent !== '';

  const submit = (event: Event) => {
    event.preventDefault();
    if (!valid || !check.ok || !parsed.ok) return;
    void action.run(async () => {
      await api.createSchedule({ agent_id: chosenAgent, cron_expr: check.expression, timezone: timezone.trim(), input: parsed.value, new_session: newSession });
      navigate({ screen: 'schedules' });
    });
  };

  return (
    <section aria-labelledby="schedule-form-title">
      <h1 id="schedule-form-title" tabIndex={-1}>
        New schedule
      </h1>
      <p>
        <a href={href({ screen: 'schedules' })}>Back to the schedules</a>
      </p>
      {!canWrite ? <Notice kind="info">Your role (viewer) cannot create schedules.</Notice> : null}
      {agents.error ? <Notice kind="error">{agents.error}</Notice> : null}
      {action.error ? <Notice kind="error">{action.error}</Notice> : null}
      <form class="card form" onSubmit={submit} noValidate>
        <div class="field">
          <label for="schedule-agent">Agent</label>
          <select id="schedule-agent" value={chosenAgent} onChange={(e) => setAgent((e.currentTarget as HTMLSelectElement).value)}>
            {(agents.data ?? []).map((a) => (
              <option key={a.id} value={a.id}>
                {a.id}: {a.description}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="schedule-cron">Cron expression (minute hour day-of-month month day-of-week)</label>
          <input
            id="schedule-cron"
            class="mono"
            value={cron}
            autoComplete="off"
            spellcheck={false}
            aria-invalid={check.ok ? 'false' : 'true'}
            aria-describedby="schedule-cron-message"
            onInput={(e) => setCron((e.currentTarget as HTMLInputElement).value)}
          />
          <p id="schedule-cron-message" class={check.ok ? 'field-ok' : 'field-error'} aria-live="polite">
            {check.ok ? `Valid: ${check.expression}` : check.reason}
          </p>
        </div>
        <div class="field">
          <label for="schedule-timezone">Time zone (IANA name)</label>
          <input
            id="schedule-timezone"
            list="schedule-timezones"
            value={timezone}
            autoComplete="off"
            onInput={(e) => setTimezone((e.currentTarget as HTMLInputElement).value)}
          />
          <datalist id="schedule-timezones">
            {zones.map((z) => (
              <option key={z} value={z} />
            ))}
          </datalist>
        </div>
        <section aria-labelledby="preview-title" class="preview">
          <h2 id="preview-title">Next five fire times</h2>
          {check.ok ? (
            <ol>
              {check.next.map((date) => (
                <li key={date.getTime()}>
                  <time dateTime={date.toISOString()}>{inZone(date, timezone.trim())}</time>{' '}
                  <span class="muted">({date.toISOString()})</span>
                </li>
              ))}
            </ol>
          ) : (
            <p class="muted">Shown once the expression and the time zone are valid.</p>
          )}
        </section>
        <JsonEditor
          id="schedule-input"
          label="Input (JSON object given to each run)"
          value={input}
          error={parsed.ok ? undefined : parsed.error}
          rows={6}
          onInput={setInput}
        />
        <div class="field checkbox">
          <input id="schedule-new-session" type="checkbox" checked={newSession} onChange={(e) => setNewSession((e.currentTarget as HTMLInputElement).checked)} />
          <label for="schedule-new-session">Start each fire on a new session (unchecked: one session, reused)</label>
        </div>
        <button type="submit" class="primary" disabled={!canWrite || !valid || action.busy}>
          Create schedule
        </button>
      </form>
    </section>
  );
}
