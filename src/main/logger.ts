import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * The process logger. Credentials never reach it: request logs carry no headers, and these
 * paths are redacted should an error object carry them.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: {
        paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'headers.authorization', 'config.SERVICE_JWT_SECRET'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
