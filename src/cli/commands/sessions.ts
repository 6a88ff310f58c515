import { Command } from 'commander';
import { contextOf } from '../context.js';
import { fields, table } from '../format.js';
import { integer, jsonObject } from '../parse.js';
import { expectOk } from '../request.js';

/** `agentplane sessions list|state|patch|history`. */
export function sessionsCommand(): Command {
  const sessions = new Command('sessions').description('read and edit sessions and their checkpoints');

  sessions
    .command('list')
    .description('sessions, newest first')
    .option('--agent <id>', 'only the sessions of this agent')
    .option('--limit <n>', 'page size (1–500)', integer(1, 500))
    .option('--offset <n>', 'page offset', integer(0))
    .action(async (options, command: Command) => {
      const context = contextOf(command);
      const query = { agent_id: options.agent as string | undefined, limit: options.limit, offset: options.offset };
      const page = await expectOk(context.client.GET('/api/sessions', { params: { query } }));
      context.print(page, () => table(page.sessions, ['id', 'agent_id', 'created_at', 'updated_at']));
    });

  sessions
    .command('state')
    .description('the latest checkpoint of a session')
    .argument('<session>', 'session id')
    .action(async (session: string, _options, command: Command) => {
      const context = contextOf(command);
      const checkpoint = await expectOk(context.client.GET('/api/sessions/state', { params: { query: { session_id: session } } }));
      context.print(checkpoint, () => fields(checkpoint));
    });

  sessions
    .command('patch')
    .description('shallow-merge keys into the latest state (a new checkpoint)')
    .argument('<session>', 'session id')
    .argument('<json>', 'the keys to set: a JSON object', jsonObject)
    .option('--if-match <seq>', 'only if the latest checkpoint still has this seq_num', integer(1))
    .action(async (session: string, state: Record<string, unknown>, options, command: Command) => {
      const context = contextOf(command);
      const checkpoint = await expectOk(
        context.client.POST('/api/sessions/state', {
          params: { query: { session_id: session } },
          body: { state },
          ...(options.ifMatch !== undefined ? { headers: { 'If-Match': `"${options.ifMatch as number}"` } } : {}),
        }),
      );
      context.print(checkpoint, () => fields(checkpoint));
    });

  sessions
    .command('history')
    .description('retained checkpoints of a session, newest first')
    .argument('<session>', 'session id')
    .option('--limit <n>', 'page size (1–500)', integer(1, 500))
    .option('--offset <n>', 'page offset', integer(0))
    .action(async (session: string, options, command: Command) => {
      const context = contextOf(command);
      const query = { session_id: session, limit: options.limit, offset: options.offset };
      const page = await expectOk(context.client.GET('/api/sessions/history', { params: { query } }));
      context.print(page, () => [
        ...table(page.checkpoints, ['seq_num', 'node_id', 'created_at', 'state']),
        ...(page.next_offset !== undefined ? [`more: --offset ${page.next_offset}`] : []),
      ]);
    });

  return sessions;
}
