import { setTimeout as sleep } from 'node:timers/promises';
import { defineAgent } from '../runtime/agent.js';

/**
 * `speak`: streams the words of its input `text` one by one as `custom` events named `token`
 * (`data: { index, word }`), as an LLM node streams tokens to a chat UI, waiting `delay_ms`
 * (default 0, at most 1000) between words; stops early when the run is cancelled. The final
 * state adds `words` (how many were sent).
 */
export const streamWords = defineAgent({
  id: 'stream-words',
  description: 'Streams the words of its input "text" one by one as custom "token" events.',
  entry: 'speak',
  nodes: {
    speak: async (state, ctx) => {
      const words = typeof state.text === 'string' ? state.text.split(/\s+/).filter(Boolean) : [];
      const delay = typeof state.delay_ms === 'number' ? Math.min(1000, Math.max(0, state.delay_ms)) : 0;
      let sent = 0;
      for (const [index, word] of words.entries()) {
        if (ctx.signal.aborted) break;
        if (delay > 0 && index > 0) await sleep(delay, undefined, { signal: ctx.signal }).catch(() => undefined);
        await ctx.emit('token', { index, word });
        sent += 1;
      }
      return { words: sent };
    },
  },
  edges: { speak: '__end__' },
});
