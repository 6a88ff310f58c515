import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

/**
 * LangGraph's checkpoint validation suite calls vitest's `describe`, `it`, hooks and `expect`
 * as globals (its own runner sets `globals: true`); ours imports them, so a suite file makes
 * them global before it calls `validate`.
 */
export function exposeVitestGlobals(): void {
  Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it });
}
