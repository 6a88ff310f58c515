/**
 * Exit codes of the `agentplane` CLI (README, "CLI"). Scripts may rely on them: they stay.
 */
export const EXIT = Object.freeze({
  /** Done; with `--wait`, the run completed or is waiting for an approval. */
  ok: 0,
  /** The API answered an error (4xx, 5xx) or could not be reached. */
  requestFailed: 1,
  /** Bad arguments: unknown command or option, malformed JSON, a value out of range. */
  usage: 2,
  /** With `--wait`: the run ended `failed` or `cancelled`. */
  runFailed: 3,
  /** With `--wait`: `--wait-ms` passed before the run stopped (it goes on). */
  stillRunning: 4,
});

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure the CLI reports with a one-line message and a given exit code. */
export class CliError extends Error {
  override readonly name = 'CliError';

  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
  }
}
