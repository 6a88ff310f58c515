import { defineAgent } from '../../src/runtime/agent.js';

/** Nodes of these agents holding now, in this process: a test waits for 0 before it ends. */
let holding = 0;

/** How many `hold` nodes are running in this process. */
export function heldNodes(): number {
  return holding;
}

/** A node that runs until its run is cancelled (its ctx.signal fires). */
function holdUntilCancelled(_state: unknown, ctx: { signal: AbortSignal }): Promise<Record<string, unknown>> {
  holding += 1;
  return new Promise((resolve) =>
    ctx.signal.addEventListener(
      'abort',
      () => {
        holding -= 1;
        resolve({});
      },
      { once: true },
    ),
  );
}

/** Holds in `hold` until cancelled: a run that stays `running` (or `queued` behind busy slots). */
export const hold = defineAgent({
  id: 'hold',
  description: 'Holds in `hold` until cancelled.',
  entry: 'hold',
  nodes: { hold: holdUntilCancelled },
  edges: { hold: '__end__' },
});

/** Asks for an approval, then holds until cancelled: a resumed run that stays `running`. */
export const askThenHold = defineAgent({
  id: 'ask-then-hold',
  description: 'Asks for an approval, then holds until cancelled.',
  entry: 'ask',
  nodes: { ask: async (_state, ctx) => ({ approved: (await ctx.interrupt({ prompt: 'Go?' })).approved }), hold: holdUntilCancelled },
  edges: { ask: 'hold', hold: '__end__' },
});
