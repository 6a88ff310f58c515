import { InvalidArgumentError } from 'commander';

/** An option or argument holding a JSON object (`--input '{"text":"hi"}'`). */
export function jsonObject(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    throw new InvalidArgumentError(`not valid JSON (${(error as Error).message}).`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new InvalidArgumentError('expected a JSON object such as {"text":"hi"}.');
  return parsed as Record<string, unknown>;
}

/** Any JSON value but null, as an approval's `resume` (`--resume '{"approved":true}'`, `--resume '"yes"'`). */
export function jsonValue(value: string): string | number | boolean | unknown[] | Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    throw new InvalidArgumentError(`not valid JSON (${(error as Error).message}); a string is quoted: '"yes"'.`);
  }
  if (parsed === null) throw new InvalidArgumentError('expected a JSON value other than null.');
  return parsed as string | number | boolean | unknown[] | Record<string, unknown>;
}

/** An integer option within [min, max]. */
export function integer(min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value) => {
    if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError('expected an integer.');
    const parsed = Number(value);
    if (parsed < min || parsed > max) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}.`);
    return parsed;
  };
}

/** A comma-separated list option (`--until completed,failed`). */
export function list(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}
