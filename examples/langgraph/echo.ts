import { Annotation, END, START, StateGraph } from '@langchain/langgraph';

/** The keys the graph keeps: an input `message`, an input `fail`, and the mark `respond` sets. */
const EchoState = Annotation.Root({
  message: Annotation<string | undefined>,
  fail: Annotation<string | undefined>,
  echoed: Annotation<boolean | undefined>,
});

/**
 * `receive` → `respond`, as the built-in echo agent: the final values are the input plus
 * `echoed: true` (`{"message":"hi"}` → `{"message":"hi","echoed":true}`); a non-empty string
 * `fail` makes `respond` throw it, a failed run to try the failure paths with.
 */
export const graph = new StateGraph(EchoState)
  .addNode('receive', () => ({}))
  .addNode('respond', (state) => {
    if (typeof state.fail === 'string' && state.fail !== '') throw new Error(state.fail);
    return { echoed: true };
  })
  .addEdge(START, 'receive')
  .addEdge('receive', 'respond')
  .addEdge('respond', END)
  .compile();
