import { Command } from 'commander';
import { contextOf } from '../context.js';
import { fields, table } from '../format.js';
import { integer, jsonObject } from '../parse.js';
import { expectOk } from '../request.js';

/** `agentplane schedules list|create|delete`. */
export function schedulesCommand(): Command {
  const schedules = new Command('schedules').description('cron schedules that start runs');

  schedules
    .command('list')
    .description('schedules, newest first')
    .option('--limit <n>', 'page size (1–500)', integer(1, 500))
    .option('--offset <n>', 'page offset', integer(0))
    .action(async (options, command: Command) => {
      const context = contextOf(command);
      const page = await expectOk(context.client.GET('/api/schedules', { params: { query: { limit: options.limit, offset: options.offset } } }));
      context.print(page, () => table(page.schedules, ['id', 'agent_id', 'cron_expr', 'timezone', 'next_run', 'new_session']));
    });

  schedules
    .command('create')
    .description('create a schedule')
    .argument('<agent>', 'agent id')
    .argument('<cron>', 'standard 5-field cron expression, e.g. "*/5 * * * *"')
    .option('--input <json>', 'input of every run: a JSON object', jsonObject)
    .option('--timezone <name>', 'IANA time zone the expression is read in (default UTC)')
    .option('--reuse-session', 'one session reused by every fire (default: a new session per fire)')
    .action(async (agent: string, cron: string, options, command: Command) => {
      const context = contextOf(command);
      const body = {
        agent_id: agent,
        cron_expr: cron,
        ...(options.input ? { input: options.input as Record<string, unknown> } : {}),
        ...(options.timezone ? { timezone: options.timezone as string } : {}),
        ...(options.reuseSession ? { new_session: false } : {}),
      };
      const schedule = await expectOk(context.client.POST('/api/schedules', { body }));
      context.print(schedule, () => fields(schedule));
    });

  schedules
    .command('delete')
    .description('delete a schedule (no further fires)')
    .argument('<id>', 'schedule id')
    .action(async (id: string, _options, command: Command) => {
      const context = contextOf(command);
      const deleted = await expectOk(context.client.DELETE('/api/schedules/{id}', { params: { path: { id } } }));
      context.print(deleted, () => `schedule ${deleted.id}  ${deleted.status}`);
    });

  return schedules;
}
