import { Command } from 'commander';
import { contextOf } from '../context.js';
import { eventLine } from '../format.js';
import { integer, list } from '../parse.js';

/** `agentplane events tail`. */
export function eventsCommand(): Command {
  const events = new Command('events').description('live run events');

  events
    .command('tail')
    .description('print run events as they happen; reconnects and resumes after the last id when cut')
    .option('--session <id>', 'only the events of this session')
    .option('--run <id>', 'only the events of this run')
    .option('--last-event-id <id>', 'start after this event id (the retained events after it first)')
    .option('--until <types>', 'exit 0 after the first event of one of these types, e.g. completed,failed,cancelled', list)
    .option('--retry-ms <ms>', 'delay before reconnecting (default: what the server asks, 3000)', integer(0))
    .action(async (options, command: Command) => {
      const context = contextOf(command);
      const until = new Set<string>(options.until ?? []);
      const stream = context.client.events.stream({
        ...(options.session ? { session: options.session as string } : {}),
        ...(options.lastEventId ? { lastEventId: options.lastEventId as string } : {}),
        ...(options.retryMs !== undefined ? { retryMs: options.retryMs as number } : {}),
        onConnect: (after) => context.note(`connected to ${context.url}${after ? `, resuming after ${after}` : ''}`),
      });
      for await (const streamed of stream) {
        if (options.run && streamed.event.run_id !== options.run) continue;
        context.print(streamed, () => eventLine(streamed));
        if (until.has(streamed.event.type)) break;
      }
    });

  return events;
}
