import { useEffect, useState } from 'preact/hooks';
import { useCaller } from '../auth.js';
import { useLoad } from '../hooks.js';
import { diffStates } from '../json.js';
import type { Checkpoint } from '../types.js';
import { DiffView, Notice, Time, useAction } from './ui.js';

const PAGE = 20;

/**
 * The retained checkpoints of a session, newest first, each with the keys it changed against
 * the checkpoint before it (the first one against an empty state: what the run started with).
 * Older pages load on request; `version` changes reload from the newest.
 */
export function Timeline({ sessionId, version }: { sessionId: string; version: number }) {
  const { api } = useCaller();
  const first = useLoad(() => api.history(sessionId, 0, PAGE), [sessionId, version]);
  const [older, setOlder] = useState<Checkpoint[]>([]);
  const [nextOffset, setNextOffset] = useState<number | undefined>();
  const action = useAction();

  useEffect(() => {
    setOlder([]);
    setNextOffset(first.data?.next_offset);
  }, [first.data]);

  const loadOlder = () =>
    action.run(async () => {
      if (nextOffset === undefined) return;
      const page = await api.history(sessionId, nextOffset, PAGE);
      setOlder((list) => [...list, ...page.checkpoints]);
      setNextOffset(page.next_offset);
    });

  const checkpoints = [...(first.data?.checkpoints ?? []), ...older];
  return (
    <section aria-labelledby="timeline-title" class="card">
      <h2 id="timeline-title">Checkpoint timeline</h2>
      {first.error ? <Notice kind="error">{first.error}</Notice> : null}
      {action.error ? <Notice kind="error">{action.error}</Notice> : null}
      <ol class="timeline">
        {checkpoints.map((checkpoint, i) => {
          const previous = checkpoints[i + 1];
          return (
            <li key={checkpoint.seq_num} data-seq={checkpoint.seq_num}>
              <h3>
                Checkpoint {checkpoint.seq_num} <span class="muted">· next node</span> <code>{checkpoint.node_id}</code>{' '}
                <span class="muted">
                  · <Time iso={checkpoint.created_at} />
                </span>
              </h3>
              {previous ? (
                <DiffView caption={`Changes from checkpoint ${previous.seq_num}`} changes={diffStates(previous.state, checkpoint.state)} />
              ) : checkpoint.seq_num === 1 ? (
                <DiffView caption="Initial state" changes={diffStates({}, checkpoint.state)} />
              ) : nextOffset !== undefined ? (
                <p class="muted">Load older checkpoints to compare this one.</p>
              ) : (
                <p class="muted">The checkpoint before this one is no longer retained.</p>
              )}
            </li>
          );
        })}
      </ol>
      {nextOffset !== undefined ? (
        <button type="button" disabled={action.busy} onClick={() => void loadOlder()}>
          Load older checkpoints
        </button>
      ) : null}
    </section>
  );
}
