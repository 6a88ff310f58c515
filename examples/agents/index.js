// @ts-check
// The agents of this package, for AGENTS_MODULE=…/index.js: the default export is the list.
// Plain JavaScript, run as it is by `node`; `npm run check` type-checks it against
// agentplane's own types (JSDoc below).
import { defineAgent } from '@agentplane/server';

/** @param {unknown} value */
const text = (value) => (typeof value === 'string' ? value.trim() : '');

/**
 * `greet` → `sign`: greets `name` of the input word by word, each word a `custom` event
 * `word` on the run's stream, then signs the greeting.
 */
export const greeter = defineAgent({
  id: 'greeter',
  description: 'Greets input.name, streaming the greeting word by word.',
  entry: 'greet',
  nodes: {
    greet: async (state, ctx) => {
      const greeting = `Hello, ${text(state.name) || 'stranger'}!`;
      for (const [index, word] of greeting.split(' ').entries()) await ctx.emit('word', { index, word });
      return { greeting };
    },
    sign: (state, ctx) => ({ signed: `${state.greeting} (${ctx.agent_id}, run ${ctx.run_id})` }),
  },
  edges: { greet: 'sign', sign: '__end__' },
});

/**
 * `assess` → `approve` (a human decides refunds over `limit`, 100 by default) → `refund` or
 * `decline`.
 */
export const refund = defineAgent({
  id: 'refund',
  description: 'Refunds input.amount at once up to the limit, above it after a human approves.',
  entry: 'assess',
  nodes: {
    assess: (state) => ({ needs_approval: Number(state.amount) > Number(state.limit ?? 100) }),
    approve: {
      run: async (state, ctx) => {
        if (state.needs_approval !== true) return { approved: true };
        const decision = await ctx.interrupt({ prompt: `Refund ${Number(state.amount)}?`, expires_in_ms: 86_400_000 });
        return { approved: decision.approved, comment: decision.comment };
      },
    },
    refund: () => ({ outcome: 'refunded' }),
    decline: () => ({ outcome: 'declined' }),
  },
  edges: {
    assess: 'approve',
    approve: (state) => (state.approved === true ? 'refund' : 'decline'),
    refund: '__end__',
    decline: '__end__',
  },
});

export default [greeter, refund];
