import { describe, expect, it } from 'vitest';
import type { RunAttempt } from '../../src/runtime/run/run-attempt.js';
import { SuperstepRecorder } from '../../src/langgraph/superstep-recorder.js';

/** What a recorder needs of a run attempt: spans and events, kept to look at. */
function attemptRecording() {
  const spans: { node: string; status: string }[] = [];
  const events: unknown[] = [];
  const attempt = {
    span: (node: string, _start: string, status: string) => ({ node, status }),
    addSpan: async (span: { node: string; status: string }) => void spans.push(span),
    publish: async (event: unknown) => void events.push(event),
  } as unknown as RunAttempt;
  return { attempt, spans, events };
}

describe('SuperstepRecorder', () => {
  it('lists the interrupts tasks raised in the order LangGraph planned the tasks, whatever order they returned in', async () => {
    const { attempt, spans } = attemptRecording();
    const steps = new SuperstepRecorder(attempt);
    const at = '2026-11-29T00:00:00.000Z';
    await steps.task({ id: 't-left', name: 'left', input: {} }, at);
    await steps.task({ id: 't-right', name: 'right', input: {} }, at);
    await steps.task({ id: 't-quiet', name: 'quiet', input: {} }, at);
    // `right` returns first, then `quiet` (no interrupt), then `left` with two.
    expect(await steps.task({ id: 't-right', name: 'right', interrupts: [{ id: 'r1', value: { question: 'Right?' } }] }, at)).toBe('interrupted');
    expect(await steps.task({ id: 't-quiet', name: 'quiet', interrupts: [] }, at)).toBe('ok');
    expect(await steps.task({ id: 't-left', name: 'left', interrupts: [{ id: 'l1', value: 'L1' }, { id: 'l2', value: 'L2' }, { value: 'no id' }] }, at)).toBe('interrupted');
    expect(steps.interrupts()).toEqual([
      { id: 'l1', value: 'L1', node: 'left' },
      { id: 'l2', value: 'L2', node: 'left' },
      { id: 'r1', value: { question: 'Right?' }, node: 'right' },
    ]);
    expect(spans).toEqual([
      { node: 'right', status: 'interrupted' },
      { node: 'left', status: 'interrupted' },
    ]);
  });

  it('has no interrupts when no task raised one', async () => {
    const { attempt } = attemptRecording();
    const steps = new SuperstepRecorder(attempt);
    await steps.task({ id: 'a', name: 'a', input: {} }, '2026-11-29T00:00:00.000Z');
    await steps.task({ id: 'a', name: 'a' }, '2026-11-29T00:00:00.001Z');
    expect(steps.interrupts()).toEqual([]);
  });
});
