import type { Message } from '@langchain/langgraph-sdk';
import { useStream } from '@langchain/langgraph-sdk/react';
import { render } from 'preact';
import { useState } from 'preact/hooks';
import './chat.css';

/*
 * The chat graph of examples/langgraph on useStream, the LangGraph SDK's React hook (bundled
 * with preact/compat as React). The API is this page's origin; the graph id is the assistant.
 * The thread id is kept in the URL (?thread=…), and reconnectOnMount keeps the running run's
 * id in sessionStorage, so a reload shows the thread and joins the run where it is.
 */

const ASSISTANT_ID = 'chat';

interface ChatState {
  messages: Message[];
}

/** What chat.ts's review node asks with interrupt(). */
interface ToolQuestion {
  question: string;
  tool_call: { name: string; args: Record<string, unknown> };
}

function threadInUrl(): string | null {
  return new URL(window.location.href).searchParams.get('thread');
}

function keepThreadInUrl(threadId: string | null): void {
  const url = new URL(window.location.href);
  if (threadId) url.searchParams.set('thread', threadId);
  else url.searchParams.delete('thread');
  window.history.replaceState(null, '', url);
}

function textOf(content: Message['content']): string {
  if (typeof content === 'string') return content;
  return content.map((part) => ('text' in part && typeof part.text === 'string' ? part.text : '')).join('');
}

const SPEAKERS: Record<string, string> = { human: 'You', ai: 'Assistant', tool: 'Tool' };

function MessageItem({ message }: { message: Message }) {
  const calls = message.type === 'ai' ? (message.tool_calls ?? []) : [];
  const text = textOf(message.content);
  return (
    <li class={`message ${message.type}`} data-type={message.type}>
      <span class="speaker">{SPEAKERS[message.type] ?? message.type}</span>
      {text && <span class="text">{text}</span>}
      {calls.map((call) => (
        <code class="call" key={call.id ?? call.name}>
          {call.name}({JSON.stringify(call.args)})
        </code>
      ))}
    </li>
  );
}

function Approval({ question, onAnswer }: { question: string; onAnswer: (approved: boolean) => void }) {
  return (
    <section class="approval" aria-label="Approval">
      <p>{question}</p>
      <button type="button" onClick={() => onAnswer(true)}>
        Approve
      </button>
      <button type="button" class="secondary" onClick={() => onAnswer(false)}>
        Reject
      </button>
    </section>
  );
}

function Chat() {
  const [threadId, setThreadId] = useState(threadInUrl);
  const [draft, setDraft] = useState('');
  const stream = useStream<ChatState, { InterruptType: ToolQuestion }>({
    apiUrl: window.location.origin,
    assistantId: ASSISTANT_ID,
    messagesKey: 'messages',
    threadId,
    onThreadId: (id) => {
      keepThreadInUrl(id);
      setThreadId(id);
    },
    reconnectOnMount: true,
  });

  const send = (event: Event) => {
    event.preventDefault();
    const text = draft.trim();
    if (!text) return;
    setDraft('');
    const message: Message = { type: 'human', content: text };
    void stream.submit({ messages: [message] }, { optimisticValues: (previous) => ({ ...previous, messages: [...(previous.messages ?? []), message] }) });
  };
  const answer = (approved: boolean) => void stream.submit(null, { command: { resume: { approved } } });
  const restart = () => {
    keepThreadInUrl(null);
    setThreadId(null);
  };

  const question = stream.isLoading ? undefined : stream.interrupt?.value?.question;
  return (
    <>
      <header>
        <h1>Chat with the weather agent</h1>
        <button type="button" class="secondary" onClick={restart} disabled={stream.isLoading}>
          New conversation
        </button>
      </header>
      <ol class="messages" aria-label="Messages" aria-live="polite">
        {stream.messages.map((message, index) => (
          <MessageItem message={message} key={message.id ?? index} />
        ))}
      </ol>
      {question !== undefined && <Approval question={question} onAnswer={answer} />}
      <p class="status" role="status">
        {stream.isLoading ? 'Streaming…' : question !== undefined ? 'Waiting for your approval.' : 'Ready.'}
        {threadId && <span class="thread"> Thread {threadId}</span>}
      </p>
      {stream.error !== undefined && stream.error !== null && (
        <p class="error" role="alert">
          {stream.error instanceof Error ? stream.error.message : JSON.stringify(stream.error)}
        </p>
      )}
      <form onSubmit={send}>
        <label for="draft">A city</label>
        <input id="draft" value={draft} onInput={(event) => setDraft(event.currentTarget.value)} placeholder="Paris" autocomplete="off" />
        <button type="submit" disabled={stream.isLoading || question !== undefined}>
          Send
        </button>
      </form>
    </>
  );
}

render(<Chat />, document.getElementById('app')!);
