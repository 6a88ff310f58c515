import pino, { type DestinationStream, type Logger } from 'pino';
import { PinoPretty } from 'pino-pretty';
import { logTraceIds } from '../observability/log-trace.js';

/** How log lines are written: JSON lines (for collectors) or pino-pretty's text (for a terminal). */
export type LogFormat = 'json' | 'pretty';

/**
 * The process logger. Credentials never reach it: request logs carry no headers, and these
 * paths are redacted should an error object carry them. A line written inside a traced span
 * carries its `trace_id` and `span_id`. `pretty` formats synchronously, so the
 * last line before an exit is never lost; colours only on a terminal.
 */
export function createLogger(level: string, destination?: DestinationStream, format: LogFormat = 'json'): Logger {
  const stream =
    format === 'pretty'
      ? PinoPretty({
          destination: destination ?? 1,
          sync: true,
          colorize: destination === undefined && process.stdout.isTTY,
          translateTime: 'SYS:HH:MM:ss.l',
          ignore: 'pid,hostname',
        })
      : destination;
  return pino(
    {
      level,
      base: { pid: process.pid },
      mixin: logTraceIds,
      redact: {
        paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'headers.authorization', 'config.SERVICE_JWT_SECRET'],
        censor: '[redacted]',
      },
    },
    stream,
  );
}
