import { useEffect, useState } from 'preact/hooks';
import { useCaller } from '../auth.js';
import { DiffView, JsonDetails, JsonEditor, Notice, Relative, useAction } from '../components/ui.js';
import { ApiError } from '../errors.js';
import { diffStates, parseJsonObject, patchOf, pretty } from '../json.js';
import { href } from '../router.js';
import type { Approval, Checkpoint } from '../types.js';

export interface Decision {
  id: string;
  status: string;
  session_id: string;
}

/**
 * One pending approval: the session's current state in a JSON editor, saved as a patch of the
 * changed keys with If-Match (so an edit never overwrites a change it did not see: 412, and
 * what changed is shown), and the decision with a comment. Unsaved edits are saved first.
 */
export function ApprovalDetail({ approval, onDecided }: { approval: Approval; onDecided(decision: Decision): void }) {
  const { api, canWrite } = useCaller();
  const [base, setBase] = useState<Checkpoint | undefined>();
  const [text, setText] = useState('');
  const [comment, setComment] = useState('');
  const [conflict, setConflict] = useState<Checkpoint | undefined>();
  const [saved, setSaved] = useState<number | undefined>();
  const action = useAction();

  const load = async () => {
    const checkpoint = await api.state(approval.session_id);
    setBase(checkpoint);
    setText(pretty(checkpoint.state));
    setConflict(undefined);
  };
  useEffect(() => {
    void action.run(load);
  }, [approval.id]);

  const parsed = parseJsonObject(text);
  const edit = base && parsed.ok ? patchOf(base.state, parsed.value) : undefined;
  const validation = !parsed.ok
    ? parsed.error
    : edit && edit.removed.length > 0
      ? `Keys cannot be removed (a patch merges keys): set ${edit.removed.map((k) => `"${k}"`).join(', ')} to null instead.`
      : undefined;
  const dirty = edit !== undefined && Object.keys(edit.patch).length > 0;

  /** Saves the edits; false when nothing could be saved (the error is shown). */
  const save = async (): Promise<boolean> => {
    if (!base || !edit || validation) return false;
    try {
      const written = await api.patchState(approval.session_id, edit.patch, base.seq_num);
      setBase(written);
      setText(pretty(written.state));
      setSaved(written.seq_num);
      return true;
    } catch (error) {
      if (error instanceof ApiError && error.status === 412) setConflict(await api.state(approval.session_id));
      throw error;
    }
  };

  const decide = (approved: boolean) =>
    action.run(async () => {
      if (dirty && !(await save())) return;
      const answer = await api.respond(approval.id, approved, comment.trim());
      onDecided({ id: answer.id, status: answer.status, session_id: approval.session_id });
    });

  const rebase = (keepEdits: boolean) => {
    if (!conflict) return;
    setText(pretty(keepEdits && edit ? { ...conflict.state, ...edit.patch } : conflict.state));
    setBase(conflict);
    setConflict(undefined);
    action.setError(undefined);
  };

  const readOnlyNote = 'approval-readonly-note';
  return (
    <section class="card detail" aria-labelledby="approval-title">
      <h2 id="approval-title">{approval.prompt ?? `Approval at node ${approval.node_id}`}</h2>
      <dl class="facts">
        <dt>Approval</dt>
        <dd>
          <code>{approval.id}</code>
        </dd>
        <dt>Agent</dt>
        <dd>{approval.agent_id}</dd>
        <dt>Session</dt>
        <dd>
          <a href={href({ screen: 'session', sessionId: approval.session_id })}>{approval.session_id}</a>
        </dd>
        <dt>Node</dt>
        <dd>{approval.node_id}</dd>
        <dt>Requested</dt>
        <dd>
          <Relative iso={approval.requested_at} />
        </dd>
        {approval.expires_at ? (
          <>
            <dt>Expires</dt>
            <dd>
              <Relative iso={approval.expires_at} /> (then {approval.on_timeout ?? 'reject'})
            </dd>
          </>
        ) : null}
        <dt>State</dt>
        <dd>{base ? `checkpoint ${base.seq_num}, at node ${base.node_id}` : 'loading…'}</dd>
      </dl>
      {approval.payload !== undefined ? <JsonDetails value={approval.payload} label="Payload of the request" /> : null}
      {action.error ? <Notice kind="error">{action.error}</Notice> : null}
      {conflict && base ? (
        <div class="conflict">
          <DiffView caption={`Changed since you opened it (checkpoint ${base.seq_num} → ${conflict.seq_num})`} changes={diffStates(base.state, conflict.state)} />
          {edit ? <DiffView caption="Your edits" changes={diffStates(base.state, { ...base.state, ...edit.patch })} /> : null}
          <div class="actions">
            <button type="button" onClick={() => rebase(true)}>
              Apply my edits to the latest state
            </button>
            <button type="button" onClick={() => rebase(false)}>
              Discard my edits
            </button>
          </div>
        </div>
      ) : null}
      {saved !== undefined && !dirty ? <Notice kind="success">Saved as checkpoint {saved}.</Notice> : null}
      {base ? (
        <JsonEditor
          id="approval-state"
          label={canWrite ? 'Session state (edit, then save or decide)' : 'Session state'}
          value={text}
          error={validation}
          readOnly={!canWrite}
          rows={14}
          onInput={setText}
        />
      ) : null}
      {canWrite ? (
        <div class="field">
          <label for="approval-comment">Comment (recorded with the decision)</label>
          <textarea id="approval-comment" rows={3} value={comment} onInput={(e) => setComment((e.currentTarget as HTMLTextAreaElement).value)} />
        </div>
      ) : (
        <p id={readOnlyNote} class="muted">
          Your role (viewer) cannot edit the state or answer approvals.
        </p>
      )}
      <div class="actions">
        {canWrite ? (
          <button type="button" disabled={!dirty || !!validation || action.busy} onClick={() => void action.run(save)}>
            Save state
          </button>
        ) : null}
        <button
          type="button"
          class="primary"
          disabled={!canWrite || !!validation || action.busy || !base}
          aria-describedby={canWrite ? undefined : readOnlyNote}
          onClick={() => void decide(true)}
        >
          {dirty ? 'Save and approve' : 'Approve'}
        </button>
        <button
          type="button"
          class="danger"
          disabled={!canWrite || !!validation || action.busy || !base}
          aria-describedby={canWrite ? undefined : readOnlyNote}
          onClick={() => void decide(false)}
        >
          {dirty ? 'Save and reject' : 'Reject'}
        </button>
        {canWrite ? (
          <button type="button" disabled={action.busy} onClick={() => void action.run(load)}>
            Reload state
          </button>
        ) : null}
      </div>
    </section>
  );
}
