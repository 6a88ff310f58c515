import { jsonEnd } from './answer-pattern.js';

/**
 * The curl examples of README sections, in order, each with what the comment under it (or
 * beside it) says the server answers:
 *
 * ```sh
 * curl -s -X POST $B/api/runs -H 'Content-Type: application/json' \
 *   -d '{"agent_id":"echo"}'
 * # 202, Location: /api/runs/0193…   {"run_id":"0193…",…}   prose after the JSON
 * curl -s $B/healthz          # 200 {"status":"ok"}
 * curl -N $B/api/runs/stream  # 200 text/event-stream, X-Run-Id
 * # retry: 3000               (then the frames, `…` where some are left out)
 * ```
 *
 * The first comment after a command is its expectation when it starts with a status code:
 * then `, Name: value` (one header, its value up to two spaces or the end), then JSON (which
 * may go on over the next comment lines until its brackets balance), or a content type (and
 * names of headers that must be there), or prose. Other comment lines are prose. A command
 * that is not curl (`open …`) is listed but not run.
 */

/** What the README says an example answers. */
export interface Expectation {
  status: number;
  /** Headers with the value shown (`ETag: "3"`); the value may hold placeholders. */
  headers: [name: string, value: string][];
  /** Headers that must be there, whatever their value (`text/event-stream, X-Run-Id`). */
  present: string[];
  /** The media type shown (`text/plain; version=0.0.4; charset=utf-8`), compared as written. */
  contentType?: string;
  /** The JSON shown, with `…` (see answer-pattern.ts). */
  json?: string;
  /** For an event stream: the lines shown under the status line, `…` where some are left out. */
  events?: string[];
}

/** One command of a README example. */
export interface Step {
  /** Line of README.md where the command starts (1-based). */
  line: number;
  /** The `## ` section it is in. */
  section: string;
  /** The shell text, continuation lines included. */
  command: string;
  /** Whether it is run: curl commands are, others (`open`) are only shown. */
  runs: boolean;
  expect?: Expectation;
  /** The comment lines under (or beside) the command, `# ` left out: a CLI command's output. */
  comments: string[];
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})\s*(\S*)/;
const STATUS = /^(\d{3})\b(.*)$/;

/** The steps of the `sh` blocks of the `## ` sections named `sections`, in README order. */
export function readmeSteps(markdown: string, sections: readonly string[]): Step[] {
  const steps: Step[] = [];
  let section = '';
  let block: { start: number; lines: string[] } | undefined;
  let fence: string | undefined;
  markdown.split('\n').forEach((text, index) => {
    const opening = FENCE.exec(text);
    if (fence) {
      if (opening && text.trim().startsWith(fence) && text.trim().length === opening[1]!.length) {
        fence = undefined;
        if (block) steps.push(...blockSteps(block.lines, block.start, section));
        block = undefined;
      } else block?.lines.push(text);
      return;
    }
    if (opening) {
      fence = opening[1];
      if (opening[2] === 'sh' && sections.includes(section)) block = { start: index + 2, lines: [] };
      return;
    }
    const heading = /^## (.+?)\s*$/.exec(text);
    if (heading) section = heading[1]!;
  });
  return steps;
}

/** Splits a shell line into its code and its trailing comment (a `#` after a space, outside quotes). */
function splitComment(text: string): [code: string, comment: string | undefined] {
  let quote: string | undefined;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"') i += 1;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) return [text.slice(0, i).trimEnd(), text.slice(i + 1)];
  }
  return [text, undefined];
}

/** The text of a comment: what follows `#` and one space. */
const commentText = (comment: string): string => comment.replace(/^ /, '');

/** The commands of one shell block whose first line is line `firstLine` of its page. */
export function blockSteps(lines: string[], firstLine: number, section: string): Step[] {
  const steps: Step[] = [];
  let current: { step: Step; comments: string[] } | undefined;
  const close = () => {
    if (current) {
      current.step.expect = expectation(current.comments, current.step);
      current.step.comments = current.comments;
    }
    current = undefined;
  };
  for (let i = 0; i < lines.length; i += 1) {
    const [code, comment] = splitComment(lines[i]!);
    if (code.trim() === '') {
      if (comment === undefined) close();
      else current?.comments.push(commentText(comment));
      continue;
    }
    close();
    const start = i;
    let command = code;
    while (command.endsWith('\\') && i + 1 < lines.length) {
      i += 1;
      command += `\n${splitComment(lines[i]!)[0]}`;
    }
    const [, last] = splitComment(lines[i]!);
    const step: Step = { line: firstLine + start, section, command: command.trim(), runs: /^curl\s/.test(command.trim()), comments: [] };
    steps.push(step);
    current = { step, comments: last === undefined ? [] : [commentText(last)] };
  }
  close();
  return steps;
}

/** Reads the expectation out of the comments that follow a command (see the module's comment). */
function expectation(comments: string[], step: Step): Expectation | undefined {
  const first = comments[0]?.trim();
  const status = first === undefined ? undefined : STATUS.exec(first);
  if (!status) return undefined;
  const expect: Expectation = { status: Number(status[1]), headers: [], present: [] };
  let rest = status[2]!;
  const header = /^, ([A-Za-z][A-Za-z0-9-]*): (.*?)(?:\s{2,}|$)/.exec(rest);
  if (header) {
    expect.headers.push([header[1]!, header[2]!]);
    rest = rest.slice(header[0].length);
  }
  rest = rest.trim();
  if (rest.startsWith('{') || rest.startsWith('[')) expect.json = readJson([rest, ...comments.slice(1)], step);
  else if (rest === '' && /^[{[]/.test(comments[1]?.trim() ?? '')) expect.json = readJson(comments.slice(1), step); // `# 200, ETag: "3"`, JSON below
  else if (/^[a-z]+\/[a-z0-9.+-]+/.test(rest)) {
    const [type, ...names] = rest.split(/,\s*/);
    expect.contentType = type!.trim();
    expect.present = names.map((name) => name.trim());
    if (expect.contentType === 'text/event-stream') expect.events = comments.slice(1).map((line) => line.trim());
  }
  return expect;
}

/** The JSON that starts the first of `lines` and goes on over the next ones until its brackets balance. */
function readJson(lines: string[], step: Step): string {
  let json = '';
  for (const line of lines) {
    json += line.trim();
    const end = jsonEnd(json);
    if (end !== undefined) return json.slice(0, end);
  }
  throw new Error(`README.md:${step.line}: the JSON under the command never closes: ${json}`);
}
