import { pino, type Logger } from 'pino';

/** The logger an integration uses when its options name none: it writes nothing. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
