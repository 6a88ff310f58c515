import { Command, Option } from 'commander';
import type { Run } from '../../client/index.js';
import { contextOf } from '../context.js';
import { describeRun, fields, table } from '../format.js';
import { integer, jsonObject } from '../parse.js';
import { exitCodeOfRun, expectOk } from '../request.js';

const RUN_COLUMNS = ['id', 'status', 'agent_id', 'session_id', 'created_at', 'error'];
const RUN_STATUSES = ['queued', 'running', 'interrupted', 'completed', 'failed', 'cancelled'] as const satisfies readonly Run['status'][];

/** The longest a wait may be held by the server (`wait_ms` 1–300000). */
export const MAX_WAIT_MS = 300_000;

/** `agentplane runs start|get|list|cancel`. */
export function runsCommand(): Command {
  const runs = new Command('runs').description('start, read and cancel runs');

  runs
    .command('start')
    .description('start a run of an agent (with --wait: answer when it stops)')
    .argument('<agent>', 'agent id, e.g. echo or human-review')
    .option('--input <json>', 'input of the run: a JSON object', jsonObject)
    .option('--session <id>', 'run on this session (created when absent)')
    .addOption(new Option('--multitask <mode>', 'when the session already has an active run').choices(['reject', 'enqueue', 'interrupt']))
    .option('--timeout-ms <ms>', 'cancel the run if still active this long after it starts', integer(1))
    .option('--wait', 'wait until the run completes, fails, is cancelled or waits for an approval')
    .option('--wait-ms <ms>', `longest wait with --wait (1–${MAX_WAIT_MS})`, integer(1, MAX_WAIT_MS), MAX_WAIT_MS)
    .option('--idempotency-key <key>', 'the start\'s Idempotency-Key: run the command again with it and it answers the same run (default: a new one per command, reused on its own retries)')
    .action(async (agent: string, options, command: Command) => {
      const context = contextOf(command);
      const body = {
        agent_id: agent,
        ...(options.input ? { input: options.input } : {}),
        ...(options.session ? { session_id: options.session } : {}),
        ...(options.multitask ? { multitask: options.multitask } : {}),
        ...(options.timeoutMs ? { timeout_ms: options.timeoutMs } : {}),
      };
      // One key per command: its retries (503, a lost connection) answer the run instead of starting another.
      const start = options.idempotencyKey ? { idempotencyKey: options.idempotencyKey as string } : {};
      if (options.wait) {
        const run = await context.client.runs.wait({ ...body, wait_ms: options.waitMs }, start);
        context.print(run, () => describeRun(run));
        process.exitCode = exitCodeOfRun(run);
        return;
      }
      const ticket = await context.client.runs.start(body, start);
      context.print(ticket, () => `run ${ticket.run_id}  ${ticket.status}  session ${ticket.session_id}`);
    });

  runs
    .command('get')
    .description('one run')
    .argument('<id>', 'run id')
    .action(async (id: string, _options, command: Command) => {
      const context = contextOf(command);
      const run = await expectOk(context.client.GET('/api/runs/{id}', { params: { path: { id } } }));
      context.print(run, () => fields(run));
    });

  runs
    .command('list')
    .description("the tenant's runs (or a session's), newest first")
    .option('--session <id>', 'only the runs of this session')
    .addOption(new Option('--status <status>', 'only the runs with this status').choices(RUN_STATUSES))
    .option('--agent <id>', 'only the runs of this agent')
    .option('--limit <n>', 'page size (1–500)', integer(1, 500))
    .option('--offset <n>', 'page offset', integer(0))
    .action(async (options, command: Command) => {
      const context = contextOf(command);
      const query = {
        session_id: options.session as string | undefined,
        status: options.status as (typeof RUN_STATUSES)[number] | undefined,
        agent_id: options.agent as string | undefined,
        limit: options.limit as number | undefined,
        offset: options.offset as number | undefined,
      };
      const page = await expectOk(context.client.GET('/api/runs', { params: { query } }));
      context.print(page, () => table(page.runs, RUN_COLUMNS));
    });

  runs
    .command('cancel')
    .description('cancel a queued, running or interrupted run')
    .argument('<id>', 'run id')
    .action(async (id: string, _options, command: Command) => {
      const context = contextOf(command);
      const run = await expectOk(context.client.POST('/api/runs/{id}/cancel', { params: { path: { id } } }));
      context.print(run, () => `run ${run.id}  ${run.status}`);
    });

  return runs;
}
