import { AIMessage } from '@langchain/core/messages';
import { FakeStreamingChatModel } from '@langchain/core/utils/testing';
import { Annotation, END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { describe, expect, it, onTestFinished } from 'vitest';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { call } from '../support/app.js';
import { startGatewayStack } from '../support/chat-gateway.js';
import type { RecordingServer } from '../support/fake-platforms/recording-server.js';
import { bodiesOf, slackHeaders, startFakeSlackApi } from '../support/fake-platforms/fake-chat.js';
import { graphAgent } from '../support/langgraph.js';
import { useRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { chatAgents, STREAMED_ANSWER } from '../fixtures/chat-agents.js';
import { chatAgentsAndGraph } from '../fixtures/chat-graph.js';

const TOKEN = 'xoxb-graph';
const SECRET = 'slack-signing-secret';
const redis = useRedis();

/** What the routed graph's classifier says: a route, not an answer. */
const ROUTE = 'go: small talk';
/** What its reviewer says of the answer, after it: not an answer either. */
const REVIEW = 'review: fine';

/** A chat model streaming `text` character by character, 20 ms apart. */
const model = (text: string) => new FakeStreamingChatModel({ responses: [new AIMessage(text)], sleep: 20 });

/**
 * A router's graph of three model calls: `classify` asks a model tagged `langsmith:nostream`
 * for a route (kept in `route`), `answer` streams {@link STREAMED_ANSWER} as the last AI message
 * of `messages`, and `review`, untagged, streams {@link REVIEW} into `verdict`, then holds until
 * Slack shows it, so the message shows the review, not the answer, when the run ends.
 */
function routedGraph(fake: RecordingServer) {
  return graphAgent(
    'routed-graph',
    new StateGraph(Annotation.Root({ ...MessagesAnnotation.spec, route: Annotation<string>, verdict: Annotation<string> }))
      .addNode('classify', async (state) => ({ route: String((await model(ROUTE).withConfig({ tags: ['langsmith:nostream'] }).invoke(state.messages)).content) }))
      .addNode('answer', async (state) => ({ messages: [await model(STREAMED_ANSWER).invoke(state.messages)] }))
      .addNode('review', async (state) => {
        const verdict = String((await model(REVIEW).invoke(state.messages)).content);
        await waitFor('the review shown', () => bodiesOf(fake, 'chat.update').some((entry) => entry.text === REVIEW));
        return { verdict };
      })
      .addEdge(START, 'classify')
      .addEdge('classify', 'answer')
      .addEdge('answer', 'review')
      .addEdge('review', END)
      .compile(),
    ['classify', 'answer', 'review'],
  );
}

/**
 * A LangGraph graph answering in Slack: its chat model's tokens (`messages` events) stream into
 * the thread as the native agents' `token` events do, embedded and on Redis (two API replicas
 * and a worker); as in LangGraph's UIs, a model tagged `langsmith:nostream` streams nothing, and
 * the run's end shows the last AI message of `messages` over what other nodes streamed.
 */
describe.each(['embedded', 'redis'] as const)('a LangGraph graph answering in chat (%s)', (backend) => {
  it("the model's tokens stream: posted at the first, edited at most once a second as they arrive, the last edit the whole answer", async () => {
    const fake = await startFakeSlackApi(TOKEN);
    onTestFinished(() => fake.close());
    const env = { SLACK_BOT_TOKEN: TOKEN, SLACK_SIGNING_SECRET: SECRET, SLACK_API_URL: `${fake.url}/api`, SLACK_AGENT: 'chat-graph' };
    const { replicas } = await startGatewayStack(env, backend === 'redis' ? redis.url : undefined, chatAgentsAndGraph);
    const body = JSON.stringify({ type: 'event_callback', event_id: 'EvG1', event: { type: 'app_mention', channel: 'C9', user: 'U1', text: '<@UBOT> hello', ts: '900.000001' } });
    const sent = await call(`${replicas[0]!.url}/slack/events`, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...slackHeaders(SECRET, body) } });
    expect(sent.status).toBe(200);

    const posted = await waitFor('the first post', () => bodiesOf(fake, 'chat.postMessage').find((entry) => entry.thread_ts === '900.000001'));
    await waitFor('the whole answer', () => bodiesOf(fake, 'chat.update').find((entry) => entry.text === STREAMED_ANSWER));
    const updates = bodiesOf(fake, 'chat.update');
    // One message, growing: each edit adds to what the one before showed, the last shows it all.
    expect(bodiesOf(fake, 'chat.postMessage')).toHaveLength(1);
    expect(STREAMED_ANSWER.startsWith(posted.text) && posted.text.length < STREAMED_ANSWER.length).toBe(true);
    const shown = [posted.text as string, ...updates.map((entry) => entry.text as string)];
    for (const [index, text] of shown.slice(1).entries()) expect(text.startsWith(shown[index]!) && text.length > shown[index]!.length).toBe(true);
    expect(shown.at(-1)).toBe(STREAMED_ANSWER);
    // Throttled: some 90 tokens 20 ms apart are a few edits.
    expect(updates.length).toBeLessThan(STREAMED_ANSWER.length / 4);
  });

  it("skips the tokens of a model tagged langsmith:nostream, and the run's end shows the last AI message over what other nodes streamed", async () => {
    const fake = await startFakeSlackApi(TOKEN);
    onTestFinished(() => fake.close());
    const env = { SLACK_BOT_TOKEN: TOKEN, SLACK_SIGNING_SECRET: SECRET, SLACK_API_URL: `${fake.url}/api`, SLACK_AGENT: 'routed-graph' };
    const agents = () => new AgentRegistry([...chatAgents().list(), routedGraph(fake)]);
    const { replicas } = await startGatewayStack(env, backend === 'redis' ? redis.url : undefined, agents);
    const body = JSON.stringify({ type: 'event_callback', event_id: 'EvG2', event: { type: 'app_mention', channel: 'C9', user: 'U1', text: '<@UBOT> hello', ts: '901.000001' } });
    const sent = await call(`${replicas[0]!.url}/slack/events`, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...slackHeaders(SECRET, body) } });
    expect(sent.status).toBe(200);

    // The review is shown (its node holds until then); the run's end then edits the answer back in.
    // Both edits may land between two looks: the answer is looked for after the review's edit, wherever that is.
    const reviewAt = await waitFor('the review shown', () => {
      const index = bodiesOf(fake, 'chat.update').findIndex((entry) => entry.text === REVIEW);
      return index >= 0 ? index : undefined;
    });
    await waitFor('the answer shown again over the review', () => bodiesOf(fake, 'chat.update').slice(reviewAt + 1).at(-1)?.text === STREAMED_ANSWER);
    const shown = [...bodiesOf(fake, 'chat.postMessage'), ...bodiesOf(fake, 'chat.update')].map((entry) => entry.text as string);
    expect(bodiesOf(fake, 'chat.postMessage')).toHaveLength(1);
    // Every text shown is a piece of the answer or of the review, never the classifier's.
    expect(shown.filter((text) => !STREAMED_ANSWER.startsWith(text) && !REVIEW.startsWith(text))).toEqual([]);
    // The classifier did answer: its route is in the run's state.
    const { sessions } = (await call(`${replicas[0]!.url}/api/sessions?agent_id=routed-graph`)).body;
    const state = (await call(`${replicas[0]!.url}/api/sessions/state?session_id=${encodeURIComponent(sessions[0].id)}`)).body.state;
    expect({ route: state.route, verdict: state.verdict }).toEqual({ route: ROUTE, verdict: REVIEW });
  });
});
