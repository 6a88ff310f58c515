/**
 * The class of an error a graph threw, kept in the run's `error` text as `<Class>: <message>`
 * (the stored run has one error string): the LangGraph routes split it again into LangGraph's
 * `{error: <Class>, message}`, as LangGraph's server answers a failed run (`GraphRecursionError`,
 * a graph's own `CustomError`). Only names that end in `Error` or `Exception` are kept: a plain
 * `Error`, and any other text (every native agent's failure), stays as it is.
 */

const CLASS = /^([A-Za-z_$][\w$]*(?:Error|Exception)): ([\s\S]*)$/;
const NAME = /^[A-Za-z_$][\w$]*(?:Error|Exception)$/;

/** `message` with the class of `error` in front, when it has a class worth naming (not plain `Error`). */
export function withErrorClass(error: unknown, message: string): string {
  const name = (error as { name?: unknown } | null)?.name;
  if (typeof name !== 'string' || name === 'Error' || !NAME.test(name)) return message;
  return message.startsWith(`${name}: `) ? message : `${name}: ${message}`;
}

/** LangGraph's `{error, message}` of a run's error text: the class in front of it, else `Error`. */
export function splitErrorClass(text: string): { error: string; message: string } {
  const match = CLASS.exec(text);
  return match ? { error: match[1]!, message: match[2]! } : { error: 'Error', message: text };
}
