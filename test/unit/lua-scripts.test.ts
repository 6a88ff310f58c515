import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SCRIPT_ARGS } from '../../src/adapters/redis/script-args.js';
import { readScript, SCRIPT_CODES } from '../../src/adapters/redis/scripts.js';
import { ACTIVE_RUN_STATUSES } from '../../src/domain/types.js';

const LUA = new URL('../../src/adapters/redis/lua/', import.meta.url);
const scripts = readdirSync(LUA)
  .filter((name) => name.endsWith('.lua'))
  .map((name) => name.replace(/\.lua$/, ''));

describe('Lua scripts of the Redis adapters', () => {
  it.each(scripts)('%s: every include is expanded, none left as a directive', (script) => {
    expect(readScript(script)).not.toMatch(/--@include/);
  });

  it('expands several includes in one script (createRun: constants, run status, checkpoint append)', () => {
    const lua = readScript('createRun-14');
    expect(lua).toContain('local function make_current_run(');
    expect(lua).toContain('local function append_checkpoint(');
    expect(lua).toContain('local SESSION_BUSY = -5');
  });

  it('writes the session copy of a run status (run_status) only in the shared include', () => {
    for (const script of scripts) {
      const raw = readFileSync(new URL(`${script}.lua`, LUA), 'utf8');
      const writes = raw.split('\n').filter((line) => /'run_status'/.test(line) && !/'H(M)?GET'/.test(line));
      expect(writes, script).toEqual([]);
    }
    const include = readFileSync(new URL('includes/runStatus.lua', LUA), 'utf8');
    expect(include).toMatch(/'run_status', status/);
  });

  it('generates the active statuses and failure codes from TypeScript', () => {
    const constants = readScript('createRun-14');
    for (const status of ACTIVE_RUN_STATUSES) expect(constants).toContain(`["${status}"] = true`);
    for (const [name, code] of Object.entries(SCRIPT_CODES)) expect(constants).toContain(`local ${name} = ${code}`);
  });

  describe('ARGV declared once (script-args.ts)', () => {
    const positions = (text: string) => [...text.matchAll(/ARGV\[(\d+)/g)].map((m) => Number(m[1]));

    it.each(Object.entries(SCRIPT_ARGS))('%s reads and documents exactly the declared fixed ARGV', (name, args) => {
      const file = scripts.find((script) => script.startsWith(`${name}-`));
      expect(file, name).toBeDefined();
      const raw = readFileSync(new URL(`${file}.lua`, LUA), 'utf8');
      const end = raw.indexOf(']]');
      const header = raw.slice(0, end);
      const code = raw.slice(end);
      const count = args.fields.length;
      expect(header).toContain(`SCRIPT_ARGS.${name} (script-args.ts)`);
      // The code reads no fixed position past the declared fields…
      expect(Math.max(...positions(code))).toBe(count);
      // …and the header documents each of them, then the variable part where one follows.
      for (let n = 1; n <= count; n += 1) expect(positions(header), `${name} ARGV[${n}]`).toContain(n);
      if (args.rest) expect(header).toContain(`ARGV[${count + 1}..`);
      else expect(positions(header).filter((n) => n > count)).toEqual([]);
    });

    it('encodes a record in the declared order: booleans as 1/0, the variable part after the fields', () => {
      const { createRun, updateRun } = SCRIPT_ARGS;
      // Positions createRun-14.lua reads: ARGV[15] queue behind, ARGV[19] fingerprint, ARGV[22] metadata count.
      expect([createRun.position('behind'), createRun.position('fingerprint'), createRun.position('metadataArgs')]).toEqual([15, 19, 22]);
      const values = Object.fromEntries(updateRun.fields.map((field, i) => [field, `v${i + 1}`])) as Record<(typeof updateRun.fields)[number], string>;
      expect(updateRun.encode({ ...values, runId: 'r', from: '' })).toEqual(['v1', 'v2', 'v3', '', 'r', 'v6', 'v7', 'v8', 'v9', 'v10', 'v11']);
      const append = SCRIPT_ARGS.appendCheckpoint.encode(
        {
          sessionId: 's',
          checkpointId: 'c',
          nodeId: '',
          now: 't',
          nowMs: 1,
          ifSeq: '',
          rejectWhileRunning: true,
          maxStateBytes: 10,
          maxStateKeys: 2,
          checkpointsRetain: 3,
          withState: false,
          runId: '',
        },
        ['k', '1'],
      );
      expect(append).toEqual(['s', 'c', '', 't', 1, '', '1', 10, 2, 3, '0', '', 'k', '1']);
      expect(() => updateRun.encode(values, ['extra'])).toThrow(/no arguments after its 11 fields/);
    });
  });
});
