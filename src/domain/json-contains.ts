/**
 * Whether `container` contains `contained` as PostgreSQL's `jsonb @>` decides it (the rule the
 * LangGraph server filters threads' metadata and values by): an object contains an object
 * whose every key it holds with a containing value; an array contains an array whose every
 * element some element of it contains; any other value only an equal one.
 */
export function jsonContains(container: unknown, contained: unknown): boolean {
  if (Array.isArray(contained)) {
    return Array.isArray(container) && contained.every((item) => container.some((held) => jsonContains(held, item)));
  }
  if (isObject(contained)) {
    return isObject(container) && Object.entries(contained).every(([key, value]) => Object.hasOwn(container, key) && jsonContains(container[key], value));
  }
  return !isObject(container) && !Array.isArray(container) && container === contained;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
