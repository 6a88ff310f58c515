/**
 * LangGraph's `messages` stream mode (`[message chunk, metadata]` per model token, and each
 * message a node returns whole) as the protocol's `messages` events: per message
 * `message-start`, then its content blocks (`content-block-start`, `-delta` for each chunk,
 * `-finish` with the whole block: text, or a tool call with its parsed arguments), then
 * `message-finish`. A message is finished when another one starts at its node, when its node's
 * update or its superstep's values arrive, or when the run stops.
 */

/** The protocol's event methods agentplane sends. */
export type ProtocolMethod = 'lifecycle' | 'messages' | 'values' | 'updates' | 'input.requested' | 'custom';

/** An event of a namespace, before the translator gives it its id and seq. */
export interface Draft {
  method: ProtocolMethod;
  namespace: string[];
  node?: string;
  data: unknown;
}

interface TextBlock {
  kind: 'text';
  text: string;
}

interface ToolCallBlock {
  kind: 'tool_call';
  /** The chunk's `index`: later chunks of the same call carry it. */
  chunkIndex: number;
  id?: string;
  name?: string;
  args: string;
}

interface OpenMessage {
  id: string;
  namespace: string[];
  node?: string;
  blocks: (TextBlock | ToolCallBlock)[];
}

interface ToolCallChunk {
  index?: unknown;
  id?: unknown;
  name?: unknown;
  args?: unknown;
}

const ROLES: Record<string, string> = { ai: 'ai', AIMessageChunk: 'ai', human: 'human', HumanMessageChunk: 'human', system: 'system', tool: 'tool', ToolMessageChunk: 'tool' };

/** The text of a message's content: a string, or its text parts. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: { type?: unknown; text?: unknown }) => (part?.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('');
}

/** A chunk's tool-call pieces: its `tool_call_chunks`, else (a whole message) its `tool_calls` with their arguments as JSON. */
function toolChunksOf(chunk: Record<string, unknown>): ToolCallChunk[] {
  if (Array.isArray(chunk.tool_call_chunks) && chunk.tool_call_chunks.length > 0) return chunk.tool_call_chunks as ToolCallChunk[];
  if (!Array.isArray(chunk.tool_calls)) return [];
  return (chunk.tool_calls as { id?: unknown; name?: unknown; args?: unknown }[]).map((call, index) => ({ index, id: call.id, name: call.name, args: JSON.stringify(call.args ?? {}) }));
}

function parsedArgs(args: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(args);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The open messages of one run, by namespace and node, and the ids of those finished. */
export class MessageStreams {
  private readonly open = new Map<string, OpenMessage>();
  private readonly finished = new Set<string>();

  /** The events of one `messages` chunk of `namespace`. */
  chunk(namespace: string[], part: unknown): Draft[] {
    const [chunk, metadata] = Array.isArray(part) ? (part as [unknown, unknown]) : [part, undefined];
    if (typeof chunk !== 'object' || chunk === null) return [];
    const message = chunk as Record<string, unknown>;
    if (typeof message.id !== 'string' || this.finished.has(message.id)) return [];
    const nodeName = (metadata as { langgraph_node?: unknown } | undefined)?.langgraph_node;
    const node = typeof nodeName === 'string' ? nodeName : undefined;
    const key = `${namespace.join('|')}::${node ?? ''}`;
    const drafts: Draft[] = [];
    let open = this.open.get(key);
    if (open && open.id !== message.id) {
      drafts.push(...this.finish(key, open));
      open = undefined;
    }
    const at = (data: unknown): Draft => ({ method: 'messages', namespace, ...(node !== undefined ? { node } : {}), data });
    if (!open) {
      open = { id: message.id, namespace, ...(node !== undefined ? { node } : {}), blocks: [] };
      this.open.set(key, open);
      const role = ROLES[String(message.type)] ?? 'ai';
      drafts.push(at({ event: 'message-start', role, id: message.id, ...(role === 'tool' && typeof message.tool_call_id === 'string' ? { tool_call_id: message.tool_call_id } : {}) }));
    }
    const text = textOf(message.content);
    if (text !== '') {
      let index = open.blocks.findIndex((block) => block.kind === 'text');
      if (index < 0) {
        index = open.blocks.push({ kind: 'text', text: '' }) - 1;
        drafts.push(at({ event: 'content-block-start', index, content: { type: 'text', text: '' } }));
      }
      (open.blocks[index] as TextBlock).text += text;
      drafts.push(at({ event: 'content-block-delta', index, delta: { type: 'text-delta', text } }));
    }
    for (const piece of toolChunksOf(message)) drafts.push(...this.toolPiece(open, piece, at));
    // A tool's or a person's message comes whole: nothing more of it follows.
    if (ROLES[String(message.type)] === 'tool' || ROLES[String(message.type)] === 'human') drafts.push(...this.finish(key, open));
    return drafts;
  }

  private toolPiece(open: OpenMessage, piece: ToolCallChunk, at: (data: unknown) => Draft): Draft[] {
    const chunkIndex = typeof piece.index === 'number' ? piece.index : 0;
    const args = typeof piece.args === 'string' ? piece.args : '';
    let index = open.blocks.findIndex((block) => block.kind === 'tool_call' && block.chunkIndex === chunkIndex);
    const drafts: Draft[] = [];
    if (index < 0) {
      const block: ToolCallBlock = { kind: 'tool_call', chunkIndex, args: '' };
      if (typeof piece.id === 'string') block.id = piece.id;
      if (typeof piece.name === 'string') block.name = piece.name;
      index = open.blocks.push(block) - 1;
      drafts.push(at({ event: 'content-block-start', index, content: { type: 'tool_call_chunk', id: block.id, name: block.name, args: '', index: chunkIndex } }));
    }
    const block = open.blocks[index] as ToolCallBlock;
    block.args += args;
    if (block.id === undefined && typeof piece.id === 'string') block.id = piece.id;
    if (block.name === undefined && typeof piece.name === 'string') block.name = piece.name;
    if (args !== '') drafts.push(at({ event: 'content-block-delta', index, delta: { type: 'block-delta', fields: { type: 'tool_call_chunk', args: block.args } } }));
    return drafts;
  }

  /** Finishes the open messages of `namespace` (of its `node` only, when given); every open one without a namespace. */
  finishAll(namespace?: string[], node?: string): Draft[] {
    const drafts: Draft[] = [];
    for (const [key, open] of [...this.open]) {
      if (namespace && open.namespace.join('|') !== namespace.join('|')) continue;
      if (node !== undefined && open.node !== node) continue;
      drafts.push(...this.finish(key, open));
    }
    return drafts;
  }

  private finish(key: string, open: OpenMessage): Draft[] {
    this.open.delete(key);
    this.finished.add(open.id);
    const at = (data: unknown): Draft => ({ method: 'messages', namespace: open.namespace, ...(open.node !== undefined ? { node: open.node } : {}), data });
    const drafts = open.blocks.map((block, index) =>
      at({
        event: 'content-block-finish',
        index,
        content: block.kind === 'text' ? { type: 'text', text: block.text } : { type: 'tool_call', id: block.id ?? '', name: block.name ?? '', args: parsedArgs(block.args) },
      }),
    );
    drafts.push(at({ event: 'message-finish' }));
    return drafts;
  }
}
