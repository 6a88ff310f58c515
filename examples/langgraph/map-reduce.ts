import { Annotation, END, Send, START, StateGraph } from '@langchain/langgraph';

const MapReduceState = Annotation.Root({
  topics: Annotation<string[]>,
  /** Every worker's result, joined in the order of `topics` (the reducer concatenates). */
  results: Annotation<string[]>({ reducer: (all, more) => all.concat(more), default: () => [] }),
  summary: Annotation<string>,
});

/** What one `count_letters` task receives through its `Send`. */
interface TopicState {
  topic: string;
}

/** One `count_letters` task per topic, all in the same step; no topics go straight to `summarize`. */
function fanOut(state: typeof MapReduceState.State): Send[] | 'summarize' {
  const topics = state.topics ?? [];
  if (!Array.isArray(topics)) throw new TypeError('"topics" must be a list of strings.');
  return topics.length ? topics.map((topic) => new Send('count_letters', { topic })) : 'summarize';
}

/**
 * Map-reduce with `Send`: input `{"topics":["a","bb"]}` runs `count_letters` once per topic,
 * their results joined by the `results` reducer, then `summarize`.
 */
export const graph = new StateGraph(MapReduceState)
  .addNode('count_letters', ({ topic }: TopicState) => ({
    results: [`${topic} has ${topic.length} letter${topic.length === 1 ? '' : 's'}`],
  }))
  .addNode('summarize', (state) => ({ summary: state.results.join('; ') || 'No topics.' }))
  .addConditionalEdges(START, fanOut, ['count_letters', 'summarize'])
  .addEdge('count_letters', 'summarize')
  .addEdge('summarize', END)
  .compile();
