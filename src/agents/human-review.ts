import { defineAgent } from '../runtime/agent.js';

/**
 * `draft` → `review` (asks "Publish the draft?") → `publish` when approved, `discard` when
 * rejected; the final state has the outcome and the approver's comment.
 */
export const humanReview = defineAgent({
  id: 'human-review',
  description: 'Drafts, asks a human to approve publishing, then publishes or discards.',
  entry: 'draft',
  nodes: {
    draft: (state) => ({ draft: `Draft: ${typeof state.topic === 'string' ? state.topic : 'untitled'}` }),
    review: async (_state, ctx) => {
      const decision = await ctx.interrupt({ prompt: 'Publish the draft?' });
      return { approved: decision.approved, comment: decision.comment };
    },
    publish: () => ({ outcome: 'published' }),
    discard: () => ({ outcome: 'discarded' }),
  },
  edges: {
    draft: 'review',
    review: (state) => (state.approved === true ? 'publish' : 'discard'),
    publish: '__end__',
    discard: '__end__',
  },
});
