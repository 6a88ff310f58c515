import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
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
});
