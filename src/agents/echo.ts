import { defineAgent } from '../runtime/agent.js';

/**
 * `receive` → `respond`; the final state is the input plus `"echoed": true`. A non-empty string
 * `fail` in the state makes `respond` throw it: a failed run to try the failure paths with
 * (list failed runs, patch the state, resume the session), as the README's examples do.
 */
export const echo = defineAgent({
  id: 'echo',
  description: 'Echoes its input back, adding "echoed": true; fails with the message of a "fail" input.',
  entry: 'receive',
  nodes: {
    receive: () => ({}),
    respond: (state) => {
      if (typeof state.fail === 'string' && state.fail !== '') throw new Error(state.fail);
      return { echoed: true };
    },
  },
  edges: { receive: 'respond', respond: '__end__' },
});
