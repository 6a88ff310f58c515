import { ApiError, type WaitedRun } from '../client/index.js';
import { CliError, EXIT, type ExitCode } from './exit-codes.js';

/** The data of a successful openapi-fetch call; an error answer becomes an ApiError. */
export async function expectOk<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await pending;
  if (error !== undefined || !response.ok) throw ApiError.fromResponse(response, error);
  return data as T;
}

/** The exit code a waiting command ends with, for the run it waited on. */
export function exitCodeOfRun(run: WaitedRun): ExitCode {
  if (run.status === 'failed' || run.status === 'cancelled') return EXIT.runFailed;
  if (run.status === 'queued' || run.status === 'running') return EXIT.stillRunning;
  return EXIT.ok;
}

/** A usage error found after parsing (an argument commander cannot check alone). */
export function usage(message: string): CliError {
  return new CliError(message, EXIT.usage);
}
