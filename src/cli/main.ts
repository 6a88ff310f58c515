#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { ApiError } from '../client/index.js';
import { approvalsCommand } from './commands/approvals.js';
import { eventsCommand } from './commands/events.js';
import { runsCommand } from './commands/runs.js';
import { schedulesCommand } from './commands/schedules.js';
import { serverCommands } from './commands/servers.js';
import { sessionsCommand } from './commands/sessions.js';
import { tokenCommand } from './commands/token.js';
import { CliError, EXIT, type ExitCode } from './exit-codes.js';

/** The `agentplane` program: server commands, client commands against `--url`, and `token`. */
export function buildProgram(): Command {
  const program = new Command('agentplane')
    .description('agentplane: run the control plane, or drive one over HTTP')
    .version('0.1.0')
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .addOption(new Option('--url <url>', 'base URL of the API').env('AGENTPLANE_URL').default('http://localhost:8420'))
    .addOption(new Option('--api-key <key>', 'API key (SERVICE_AUTH=apikey)').env('AGENTPLANE_API_KEY'))
    .addOption(new Option('--api-key-header <name>', 'header of the API key (SERVICE_API_KEY_HEADER)').env('AGENTPLANE_API_KEY_HEADER').default('X-Api-Key'))
    .addOption(new Option('--token <jwt>', 'bearer token (SERVICE_AUTH=jwt), e.g. from `agentplane token`').env('AGENTPLANE_TOKEN'))
    .option('--json', 'print JSON (one document, or one line per event) instead of text');
  for (const command of [...serverCommands(), runsCommand(), sessionsCommand(), approvalsCommand(), eventsCommand(), schedulesCommand(), tokenCommand()]) {
    program.addCommand(command);
  }
  inheritExitOverride(program);
  return program;
}

/** `addCommand` does not copy the program's settings: every command throws instead of exiting. */
function inheritExitOverride(command: Command): void {
  for (const sub of command.commands) {
    sub.exitOverride().showHelpAfterError('(add --help for usage)');
    inheritExitOverride(sub);
  }
}

/** Commands that start a server: the process lives on after their action resolves. */
const SERVER_COMMANDS = new Set(['dev', 'api', 'worker', 'webhooks']);

/**
 * Runs the CLI on `argv` and resolves with the exit code (see {@link EXIT}), or with `serving`
 * once a server command listens (the process lives on). Messages for the user go to stderr.
 */
export async function main(argv: readonly string[] = process.argv): Promise<number | 'serving'> {
  const program = buildProgram();
  let ran: Command | undefined;
  program.hook('preAction', (_program, command) => {
    ran = command;
  });
  try {
    await program.parseAsync([...argv]);
    if (ran && SERVER_COMMANDS.has(ran.name())) return 'serving';
    return Number(process.exitCode ?? EXIT.ok);
  } catch (error) {
    const { message, exitCode } = explain(error, program.opts<{ url: string }>().url);
    if (message) process.stderr.write(`agentplane: ${message}\n`);
    return exitCode;
  }
}

/** The message and exit code of what a command threw. */
function explain(error: unknown, url: string): { message?: string; exitCode: ExitCode } {
  if (error instanceof CommanderError) {
    // Commander printed its own message (or the help) already.
    const done = error.code === 'commander.helpDisplayed' || error.code === 'commander.version';
    return { exitCode: done ? EXIT.ok : EXIT.usage };
  }
  if (error instanceof CliError) return { message: error.message, exitCode: error.exitCode };
  if (error instanceof ApiError) {
    const request = error.requestId ? ` (request ${error.requestId})` : '';
    return { message: `${error.status} ${error.code}: ${error.message}${request}`, exitCode: EXIT.requestFailed };
  }
  if (error instanceof TypeError && error.message === 'fetch failed') {
    const cause = error.cause as { code?: string; message?: string } | undefined;
    return { message: `cannot reach ${url}: ${cause?.code ?? cause?.message ?? error.message}`, exitCode: EXIT.requestFailed };
  }
  return { message: error instanceof Error ? error.message : String(error), exitCode: EXIT.requestFailed };
}

/**
 * Exits once stdout and stderr are flushed: fetch keeps idle connections open for a few
 * seconds, which would otherwise hold a finished client command.
 */
function exitWhenFlushed(code: number): void {
  let pending = 2;
  const done = () => {
    pending -= 1;
    if (pending === 0) process.exit(code);
  };
  process.stdout.write('', done);
  process.stderr.write('', done);
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = await main();
  if (result !== 'serving') exitWhenFlushed(result);
}
