import { SseClientPool } from './clients.js';

/**
 * Child process of the memory floor measurement: opens `argv[3]` idle SSE connections to
 * 127.0.0.1:`argv[2]`, prints `open`, and holds them until it is killed.
 */
const pool = new SseClientPool(Number(process.argv[2]), Number.MAX_SAFE_INTEGER);
await pool.open(Number(process.argv[3]));
console.log('open');
setInterval(() => {}, 60_000);
