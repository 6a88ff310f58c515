import { describe, expect, it } from 'vitest';
import { Annotation, END, MessagesAnnotation, START, StateGraph, messagesStateReducer } from '@langchain/langgraph';
import type { BaseMessage } from '@langchain/core/messages';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { graph as echo } from '../../examples/langgraph/echo.js';
import { streamsMessages } from '../../src/langgraph/stream-modes.js';

const Plain = Annotation.Root({ x: Annotation<string | undefined> });
const one = <G extends { compile: () => unknown }>(g: G) => g.compile() as Parameters<typeof streamsMessages>[0];

describe('streamsMessages: whether a run streams model tokens nobody asked for', () => {
  it('is off for a graph with no messages in its state and no chat model node (the echo graph)', () => {
    expect(streamsMessages(echo)).toBe(false);
  });

  it('is on for MessagesAnnotation, a channel with the messages reducer under another name, or one named messages', () => {
    expect(streamsMessages(one(new StateGraph(MessagesAnnotation).addNode('m', () => ({})).addEdge(START, 'm').addEdge('m', END)))).toBe(true);
    const Chat = Annotation.Root({ history: Annotation<BaseMessage[]>({ reducer: messagesStateReducer, default: () => [] }) });
    expect(streamsMessages(one(new StateGraph(Chat).addNode('m', () => ({})).addEdge(START, 'm').addEdge('m', END)))).toBe(true);
    const Named = Annotation.Root({ messages: Annotation<string[]> });
    expect(streamsMessages(one(new StateGraph(Named).addNode('m', () => ({})).addEdge(START, 'm').addEdge('m', END)))).toBe(true);
  });

  it('is on for a chat model as a node, and for a subgraph node that holds messages', () => {
    const model = new FakeListChatModel({ responses: ['hi'] });
    expect(streamsMessages(one(new StateGraph(Plain).addNode('model', model as any).addEdge(START, 'model').addEdge('model', END)))).toBe(true);
    const chat = new StateGraph(MessagesAnnotation).addNode('m', () => ({})).addEdge(START, 'm').addEdge('m', END).compile();
    expect(streamsMessages(one(new StateGraph(Plain).addNode('sub', chat as any).addEdge(START, 'sub').addEdge('sub', END)))).toBe(true);
  });
});
