import { Annotation, END, START, StateGraph, interrupt } from '@langchain/langgraph';

/** The keys the graph keeps: the input `topic`, the `draft`, the reviewer's answer and the `outcome`. */
const ReviewState = Annotation.Root({
  topic: Annotation<string | undefined>,
  draft: Annotation<string | undefined>,
  approved: Annotation<boolean | undefined>,
  comment: Annotation<string | undefined>,
  outcome: Annotation<'published' | 'discarded' | undefined>,
});

/** What `interrupt()` returns: `{approved, comment}` when answered with `approved`, else the `resume` given. */
type Answer = { approved?: unknown; comment?: unknown } | boolean | null | undefined;

/**
 * The built-in `human-review` agent as a graph: `write_draft` → `review` (one `interrupt()`,
 * "Publish the draft?", an approval) → `publish` when approved, `discard` otherwise. Answered
 * with `{"approved": true}` (or `resume: true`) the final values are
 * `{"topic", "draft": "Draft: <topic>", "approved": true, "comment", "outcome": "published"}`.
 */
export const graph = new StateGraph(ReviewState)
  .addNode('write_draft', (state) => ({ draft: `Draft: ${typeof state.topic === 'string' ? state.topic : 'untitled'}` }))
  .addNode('review', (state) => {
    const answer = interrupt<{ question: string; draft?: string }, Answer>({ question: 'Publish the draft?', draft: state.draft });
    const approved = answer === true || (typeof answer === 'object' && answer !== null && answer.approved === true);
    const comment = typeof answer === 'object' && answer !== null && typeof answer.comment === 'string' ? answer.comment : '';
    return { approved, comment };
  })
  .addNode('publish', () => ({ outcome: 'published' as const }))
  .addNode('discard', () => ({ outcome: 'discarded' as const }))
  .addEdge(START, 'write_draft')
  .addEdge('write_draft', 'review')
  .addConditionalEdges('review', (state) => (state.approved === true ? 'publish' : 'discard'), ['publish', 'discard'])
  .addEdge('publish', END)
  .addEdge('discard', END)
  .compile();
