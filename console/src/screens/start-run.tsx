import { useState } from 'preact/hooks';
import { useCaller } from '../auth.js';
import { JsonEditor, Notice, useAction } from '../components/ui.js';
import { useLoad } from '../hooks.js';
import { parseJsonObject } from '../json.js';
import { href } from '../router.js';
import type { RunTicket } from '../types.js';

/** The client-supplied session id rule of the API. */
const SESSION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Starts a run of a registered agent (GET /api/agents) with JSON input, on a new or named session. */
export function StartRun() {
  const { api, canWrite } = useCaller();
  const agents = useLoad(() => api.agents(), []);
  const [agent, setAgent] = useState('');
  const [input, setInput] = useState('{}');
  const [sessionId, setSessionId] = useState('');
  const [ticket, setTicket] = useState<RunTicket | undefined>();
  const action = useAction();

  const chosen = agents.data?.find((a) => a.id === agent) ?? agents.data?.[0];
  const parsed = parseJsonObject(input);
  const sessionError = sessionId !== '' && !SESSION_ID.test(sessionId) ? 'Use 1–128 characters of A–Z a–z 0–9 . _ : -' : undefined;

  const submit = (event: Event) => {
    event.preventDefault();
    if (!chosen || !parsed.ok || sessionError) return;
    void action.run(async () => {
      setTicket(await api.startRun({ agent_id: chosen.id, input: parsed.value, ...(sessionId ? { session_id: sessionId } : {}) }));
    });
  };

  return (
    <section aria-labelledby="start-title">
      <h1 id="start-title" tabIndex={-1}>
        Start a run
      </h1>
      {!canWrite ? <Notice kind="info">Your role (viewer) cannot start runs.</Notice> : null}
      {agents.error ? <Notice kind="error">{agents.error}</Notice> : null}
      {action.error ? <Notice kind="error">{action.error}</Notice> : null}
      {ticket ? (
        <Notice kind="success">
          Run <code>{ticket.run_id}</code> is {ticket.status} on session{' '}
          <a href={href({ screen: 'session', sessionId: ticket.session_id })}>{ticket.session_id}</a>.
        </Notice>
      ) : null}
      <form class="card form" onSubmit={submit} noValidate>
        <div class="field">
          <label for="run-agent">Agent</label>
          <select id="run-agent" value={chosen?.id ?? ''} onChange={(e) => setAgent((e.currentTarget as HTMLSelectElement).value)}>
            {(agents.data ?? []).map((a) => (
              <option key={a.id} value={a.id}>
                {a.id}
              </option>
            ))}
          </select>
          {chosen ? (
            <p class="muted">
              {chosen.description} Nodes: {chosen.nodes.join(', ')}; entry {chosen.entry}.
            </p>
          ) : null}
        </div>
        <JsonEditor id="run-input" label="Input (JSON object, the run's initial state)" value={input} error={parsed.ok ? undefined : parsed.error} rows={8} onInput={setInput} />
        <div class="field">
          <label for="run-session">Session id (optional; a new session when empty)</label>
          <input
            id="run-session"
            value={sessionId}
            autoComplete="off"
            aria-invalid={sessionError ? 'true' : 'false'}
            aria-describedby="run-session-message"
            onInput={(e) => setSessionId((e.currentTarget as HTMLInputElement).value.trim())}
          />
          <p id="run-session-message" class={sessionError ? 'field-error' : 'field-ok'} aria-live="polite">
            {sessionError ?? ''}
          </p>
        </div>
        <button type="submit" class="primary" disabled={!canWrite || !chosen || !parsed.ok || !!sessionError || action.busy}>
          Start run
        </button>
      </form>
    </section>
  );
}
