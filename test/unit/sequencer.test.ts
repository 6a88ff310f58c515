import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LONGEST_FILES, longestFirst } from '../support/sequencer.js';

describe('the order of the test files', () => {
  it('puts the longest files first, in their order, and keeps the order of the rest', () => {
    const files = ['test/a.test.ts', LONGEST_FILES[2]!, 'test/b.test.ts', LONGEST_FILES[0]!, 'test/c.test.ts'];
    expect(longestFirst(files, (f) => f)).toEqual([LONGEST_FILES[0], LONGEST_FILES[2], 'test/a.test.ts', 'test/b.test.ts', 'test/c.test.ts']);
  });

  it('names files that exist', () => {
    expect(LONGEST_FILES.filter((file) => !existsSync(file))).toEqual([]);
  });
});
