import type { Logger } from 'pino';

/**
 * The logger `getLogger()` of `@langchain/langgraph-sdk/logging` answers inside a graph: the
 * SDK reads it from `globalThis[Symbol.for("langgraph.api.sdk-logger")]`, which LangGraph's
 * server sets (a winston logger) and which agentplane sets to its own pino logger, so a graph
 * that logs through it loads and its lines join the process's.
 */
const GLOBAL_LOGGER = Symbol.for('langgraph.api.sdk-logger');

type Level = 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** The SDK's (winston's) levels, on pino's. */
const LEVELS: Record<string, Level> = {
  error: 'error',
  warn: 'warn',
  info: 'info',
  help: 'info',
  data: 'info',
  prompt: 'info',
  http: 'debug',
  verbose: 'debug',
  debug: 'debug',
  input: 'debug',
  silly: 'trace',
};

type LogMethod = (message: unknown, ...meta: unknown[]) => SdkLogger;
export type SdkLogger = Record<keyof typeof LEVELS, LogMethod>;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `logger` with the SDK's methods: `(message, ...meta)`, a string and objects merged as fields, or one object. */
export function sdkLoggerOf(logger: Logger): SdkLogger {
  const sdk = {} as SdkLogger;
  for (const [name, level] of Object.entries(LEVELS)) {
    sdk[name] = (message, ...meta) => {
      const fields: Record<string, unknown> = { source: 'graph' };
      for (const item of meta) {
        if (item instanceof Error) fields.err = item;
        else if (isRecord(item)) Object.assign(fields, item);
      }
      if (message instanceof Error) logger[level]({ ...fields, err: message }, message.message);
      else if (isRecord(message)) {
        const { message: text, ...rest } = message;
        logger[level]({ ...fields, ...rest }, typeof text === 'string' ? text : '');
      } else logger[level](fields, String(message));
      return sdk;
    };
  }
  return sdk;
}

/** Sets the SDK's global logger to `logger`, unless a program embedding agentplane set one already. */
export function registerSdkLogger(logger: Logger): void {
  const global = globalThis as Record<symbol, unknown>;
  if (global[GLOBAL_LOGGER] === undefined) global[GLOBAL_LOGGER] = sdkLoggerOf(logger);
}
