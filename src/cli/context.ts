import type { Command } from 'commander';
import { createClient, type AgentplaneClient } from '../client/index.js';

/** The options every client command shares (set on the program, before or after the command). */
export interface GlobalOptions {
  url: string;
  apiKey?: string;
  apiKeyHeader: string;
  token?: string;
  json?: boolean;
}

/** What a client command works with: the typed client and the output in the chosen format. */
export interface CommandContext {
  client: AgentplaneClient;
  url: string;
  json: boolean;
  /** Writes the JSON of `value` (with `--json`) or the human lines. */
  print(value: unknown, human: () => string | string[]): void;
  /** A line on stderr that is not a result (progress, hints); kept out of `--json` output. */
  note(line: string): void;
}

/** The context of the command being run, from its options and the program's. */
export function contextOf(command: Command): CommandContext {
  const options = command.optsWithGlobals<GlobalOptions>();
  const client = createClient({
    baseUrl: options.url,
    apiKeyHeader: options.apiKeyHeader,
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    ...(options.token ? { token: options.token } : {}),
  });
  const json = options.json === true;
  return {
    client,
    url: options.url,
    json,
    print(value, human) {
      const text = json ? JSON.stringify(value) : [human()].flat().join('\n');
      process.stdout.write(`${text}\n`);
    },
    note(line) {
      process.stderr.write(`${line}\n`);
    },
  };
}
