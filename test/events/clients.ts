/** The SSE clients moved to test/support/sse.ts; this module keeps the old import path working. */
export { eventsOf, openRaw, parseFrame, readFrames, watch } from '../support/sse.js';
export type { Frame, RawStream, Received, Watcher, WatchOptions } from '../support/sse.js';
