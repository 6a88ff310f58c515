import { describe, expect, it } from 'vitest';
import { isNormalPath } from '../../src/http/middleware/normal-path.js';

/** The standard's answer: a path is normal when the WHATWG URL parser writes it back unchanged. */
const whatwg = (path: string) => {
  if (!path.startsWith('/')) return false;
  try {
    return new URL(`http://localhost${path}`).pathname === path;
  } catch {
    return false;
  }
};

describe('isNormalPath', () => {
  it('agrees with the WHATWG URL parser on paths that are and are not normal', () => {
    const samples = [
      '/', '/api/runs', '/api/runs/', '/api/runs/wait', '/threads/0b1c-2d/runs/stream', '/a//b', '//', '',
      '/ui/a/..\\..\\custom\\secret', '/ui/a/../custom', '/a/./b', '/a/%2e%2E/b', '/a/.%2e/b', '/a/b.', '/a/.b', '/a/b.js',
      '/a b', '/a"b', '/a<b>', '/a`b', '/a{b}', '/a^b', '/a|b', '/a\tb', '/é', '/a%20b', '/a%zz', "/a!$&'()*+,;=:@-_~b",
    ];
    for (const path of samples) expect([path, isNormalPath(path)]).toEqual([path, whatwg(path)]);
  });

  it('answers a long run of plain characters followed by one that is not, as the parser does, at once', () => {
    // The shortcut once split such a run into segments every way there is before failing
    // (2^n tries for n characters: a 40-character path held the event loop for an hour).
    const run = 'a'.repeat(64);
    for (const path of [`/${run}.`, `/${run} `, `/${run}%`, `/x/${run}//`, `/${'ab/'.repeat(64)}\\`, `/${run}/..`]) {
      expect([path, isNormalPath(path)]).toEqual([path, whatwg(path)]);
    }
  });

  it('agrees with it on random paths of characters that matter to it', () => {
    const alphabet = ['/', '/', 'a', 'Z', '0', '-', '_', '~', '.', '.', '%', '2', 'e', 'E', '\\', ' ', '?', '#', '^', '`', '{', '|', ':', '@', '!', "'", 'é', '\u0001'];
    // A fixed linear congruential sequence: the same paths on every run.
    let seed = 42;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    let normal = 0;
    for (let i = 0; i < 20_000; i += 1) {
      const length = 1 + Math.floor(next() * 12);
      const path = `/${Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join('')}`;
      expect([path, isNormalPath(path)]).toEqual([path, whatwg(path)]);
      if (whatwg(path)) normal += 1;
    }
    // Both kinds were tried.
    expect(normal).toBeGreaterThan(1_000);
    expect(normal).toBeLessThan(19_000);
  });
});
