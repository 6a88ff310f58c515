import type { BaseMessage } from '@langchain/core/messages';
import { useStream } from '@langchain/react';
import { render } from 'preact';
import { useState } from 'preact/hooks';
import './chat.css';

/*
 * The chat graph of examples/langgraph on useStream of @langchain/react (LangGraph's streaming
 * protocol over HTTP and server-sent events), bundled with preact/compat as React. The API is
 * `?api=<url>` when given, else this page's origin; the graph id is the assistant. The thread
 * id is kept in the URL (?thread=…): a reload shows the thread and, while a run goes on, joins
 * it where it is.
 */

const ASSISTANT_ID = 'chat';

/** The graph's state as this page sends it: messages as plain `{type, content}` objects (the hook shows them as BaseMessage). */
interface ChatState {
  messages: { type: string; content: string }[];
}

/** What chat.ts's review node asks with interrupt(). */
interface ToolQuestion {
  question: string;
  tool_call: { name: string; args: Record<string, unknown> };
}

const pageUrl = () => new URL(window.location.href);

function threadInUrl(): string | null {
  return pageUrl().searchParams.get('thread');
}

/** The API this page talks to: `?api=` (another origin; it answers CORS), else the page's own. */
function apiUrl(): string {
  return pageUrl().searchParams.get('api') ?? window.location.origin;
}

function keepThreadInUrl(threadId: string | null): void {
  const url = pageUrl();
  if (threadId) url.searchParams.set('thread', threadId);
  else url.searchParams.delete('thread');
  window.history.replaceState(null, '', url);
}

const SPEAKERS: Record<string, string> = { human: 'You', ai: 'Assistant', tool: 'Tool' };

interface ToolCall {
  id?: string;
  name: string;
  args: Record<string, unknown>;
}

function MessageItem({ message }: { message: BaseMessage }) {
  const type = message.type;
  const calls = type === 'ai' ? ((message as BaseMessage & { tool_calls?: ToolCall[] }).tool_calls ?? []) : [];
  const text = message.text;
  return (
    <li class={`message ${type}`} data-type={type}>
      <span class="speaker">{SPEAKERS[type] ?? type}</span>
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
  const stream = useStream<ChatState, ToolQuestion>({
    apiUrl: apiUrl(),
    assistantId: ASSISTANT_ID,
    messagesKey: 'messages',
    threadId,
    onThreadId: (id) => {
      keepThreadInUrl(id);
      setThreadId(id);
    },
  });

  const send = (event: Event) => {
    event.preventDefault();
    const text = draft.trim();
    if (!text) return;
    setDraft('');
    void stream.submit({ messages: [{ type: 'human', content: text }] });
  };
  // The interrupt answered by its id: right after a reload it is known from the thread's state.
  // A refused answer shows as stream.error (the hook sets it), so the rejection needs no handling here.
  const answer = (approved: boolean) => {
    stream.respond({ approved }, stream.interrupt?.id ? { interruptId: stream.interrupt.id } : undefined).catch(() => undefined);
  };
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
