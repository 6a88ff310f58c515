import { describe, expect, it } from 'vitest';
import { AnswerStreams } from '../../src/integrations/gateway/answer-stream.js';
import type { ChatPlatform } from '../../src/integrations/gateway/platform.js';
import { InFlight } from '../../src/integrations/shared/in-flight.js';

/** The platform's side of streaming as calls recorded in order; nothing else is called. */
function recordingPlatform(): { platform: ChatPlatform; calls: string[] } {
  const calls: string[] = [];
  const platform = {
    name: 'slack',
    postReply: async (_place: unknown, text: string) => {
      calls.push(`post ${text}`);
      return { channel: 'C1', message: '1' };
    },
    editReply: async (_ref: unknown, text: string) => void calls.push(`edit ${text}`),
  } as unknown as ChatPlatform;
  return { platform, calls };
}

describe('AnswerStreams: a LangGraph graph\'s model tokens (`messages` events)', () => {
  it('joins the chunks of each AI message, starts anew at the next AI message, and shows no other message', async () => {
    const tasks = new InFlight((error) => {
      throw error;
    });
    const streams = new AnswerStreams(async () => true, tasks);
    const { platform, calls } = recordingPlatform();
    const place = { channel: 'C1' };
    const chunk = (id: string, content: unknown, type = 'ai') => ({ type, id, content, tool_calls: [], tool_call_chunks: [] });
    streams.token(platform, place, 'r1', 'messages', chunk('m1', 'Let me '));
    streams.token(platform, place, 'r1', 'messages', chunk('m1', 'look.'));
    streams.token(platform, place, 'r1', 'messages', chunk('m1', ''));
    streams.token(platform, place, 'r1', 'messages', chunk('t1', 'sunny, 21°C', 'tool'));
    streams.token(platform, place, 'r1', 'messages', chunk('m2', [{ type: 'text', text: 'It is ' }]));
    streams.token(platform, place, 'r1', 'messages', chunk('m2', 'sunny.'));
    const ended = streams.end(platform, 'r1')!;
    expect(ended.text).toBe('It is sunny.');
    await ended.show(ended.text);
    await tasks.drain();
    expect(calls.at(-1)).toMatch(/^(post|edit) It is sunny\.$/);
    expect(calls.some((entry) => entry.includes('21°C'))).toBe(false);
  });
});
