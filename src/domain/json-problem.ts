/** JSON bodies nested deeper than this are refused (deep values overflow the stack later). */
export const MAX_JSON_DEPTH = 64;

/**
 * Checks a parsed JSON body without recursion: its nesting depth, and numbers that would not
 * come back as sent (non-finite, such as 1e400, or integers beyond 2^53 − 1, whose digits JSON
 * parsing already changed). Answers the problem, naming the field, or undefined.
 */
export function jsonProblem(value: unknown): string | undefined {
  const stack: [unknown, number, string][] = [[value, 1, 'body']];
  while (stack.length > 0) {
    const [current, depth, path] = stack.pop()!;
    if (typeof current === 'number') {
      if (!Number.isFinite(current) || (Number.isInteger(current) && !Number.isSafeInteger(current))) {
        return `${path}: the number is out of range (finite numbers, integers up to 2^53 − 1; send larger ones as strings).`;
      }
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth > MAX_JSON_DEPTH) return `body: JSON nested deeper than ${MAX_JSON_DEPTH} levels.`;
    for (const [key, child] of Object.entries(current)) stack.push([child, depth + 1, Array.isArray(current) ? `${path}[${key}]` : `${path}.${key}`]);
  }
  return undefined;
}
