import { defineAgent } from '../runtime/agent.js';

/** `receive` → `respond`; the final state is the input plus `"echoed": true`. */
export const echo = defineAgent({
  id: 'echo',
  description: 'Echoes its input back, adding "echoed": true.',
  entry: 'receive',
  nodes: {
    receive: () => ({}),
    respond: () => ({ echoed: true }),
  },
  edges: { receive: 'respond', respond: '__end__' },
});
