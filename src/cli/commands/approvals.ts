import { Command, Option } from 'commander';
import { contextOf } from '../context.js';
import { describeRun, fields, table } from '../format.js';
import { integer, jsonValue } from '../parse.js';
import { exitCodeOfRun, expectOk } from '../request.js';
import { MAX_WAIT_MS } from './runs.js';

const PENDING_COLUMNS = ['id', 'prompt', 'agent_id', 'session_id', 'run_id', 'requested_at', 'expires_at'];
const DECIDED_COLUMNS = ['id', 'status', 'prompt', 'agent_id', 'session_id', 'decided_by', 'decided_at', 'comment'];

/** `agentplane approvals list|get|approve|reject`. */
export function approvalsCommand(): Command {
  const approvals = new Command('approvals').description('the approvals inbox: pending requests and their answers');

  approvals
    .command('list')
    .description('pending requests, oldest first; with --status decided: answered or closed ones, newest decision first')
    .addOption(new Option('--status <status>', 'pending or decided (approved, rejected, or cancelled with their run)').choices(['pending', 'decided']).default('pending'))
    .option('--limit <n>', 'page size (1–500)', integer(1, 500))
    .option('--offset <n>', 'page offset', integer(0))
    .action(async (options, command: Command) => {
      const context = contextOf(command);
      const status = options.status as 'pending' | 'decided';
      const query = { status, limit: options.limit as number | undefined, offset: options.offset as number | undefined };
      const page = await expectOk(context.client.GET('/api/approvals', { params: { query } }));
      context.print(page, () => table(page.approvals, status === 'pending' ? PENDING_COLUMNS : DECIDED_COLUMNS));
    });

  approvals
    .command('get')
    .description('one approval request, pending or decided')
    .argument('<id>', 'approval id')
    .action(async (id: string, _options, command: Command) => {
      const context = contextOf(command);
      const approval = await expectOk(context.client.GET('/api/approvals/{id}', { params: { path: { id } } }));
      context.print(approval, () => fields(approval));
    });

  for (const [name, approved] of [['approve', true], ['reject', false]] as const) {
    approvals
      .command(name)
      .description(`${name} a pending request; its run resumes (with --wait: answer when it next stops)`)
      .argument('<id>', 'approval id')
      .option('--comment <text>', 'recorded with the decision and visible to the run')
      .option('--resume <json>', 'a JSON answer (any JSON but null) recorded with the decision; the paused node receives it', jsonValue)
      .option('--wait', 'wait until the resumed run next stops')
      .option('--wait-ms <ms>', `longest wait with --wait (1–${MAX_WAIT_MS})`, integer(1, MAX_WAIT_MS), MAX_WAIT_MS)
      .action(async (id: string, options, command: Command) => {
        const context = contextOf(command);
        const answer = await context.client.approvals.respond({
          id,
          approved,
          ...(options.comment !== undefined ? { comment: options.comment as string } : {}),
          ...(options.resume !== undefined ? { resume: options.resume as ReturnType<typeof jsonValue> } : {}),
          ...(options.wait ? { wait_ms: options.waitMs as number } : {}),
        });
        const run = answer.run;
        context.print(answer, () => [`approval ${answer.id}  ${answer.status}`, ...(run ? describeRun(run) : [])]);
        if (run) process.exitCode = exitCodeOfRun(run);
      });
  }

  return approvals;
}
