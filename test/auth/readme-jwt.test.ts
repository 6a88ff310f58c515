import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/app.js';
import { startSecuredApi, type SecuredApi } from './secured-api.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const GUIDE = readFileSync(new URL('../../docs/guides/auth-and-tenants.md', import.meta.url), 'utf8');

/** The JavaScript of the authentication guide's `TOKEN=$(node --input-type=module -e "…")` line. */
function readmeTokenScript(): string {
  const line = GUIDE.split('\n').find((l) => l.startsWith('TOKEN=$(node --input-type=module -e "'));
  if (!line) throw new Error('docs/guides/auth-and-tenants.md has no TOKEN=$(node --input-type=module -e "…") line');
  return line.slice('TOKEN=$(node --input-type=module -e "'.length, line.lastIndexOf('")'));
}

/**
 * The authentication guide's JWT example, run as written: its node one-liner, in the repository (jose from
 * node_modules) with only SERVICE_JWT_SECRET set, mints a token an API in jwt mode with RBAC
 * accepts, for the subject, role and tenant the guide says.
 */
describe('the JWT example of the authentication guide', () => {
  const secret = randomBytes(32).toString('hex');
  let api: SecuredApi;

  beforeAll(async () => {
    api = await startSecuredApi({ SERVICE_AUTH: 'jwt', SERVICE_JWT_SECRET: secret, SERVICE_RBAC: 'true' });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('mints a token the API accepts as user ana of tenant acme', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', readmeTokenScript()], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', SERVICE_JWT_SECRET: secret },
    });
    const token = stdout.trim();
    const auth = { Authorization: `Bearer ${token}` };

    expect((await call(`${api.url}/api/sessions`)).status).toBe(401);
    expect((await call(`${api.url}/api/sessions`, { headers: auth })).status).toBe(200);
    // A write needs the user role; the run lands in tenant acme, not in DefaultTenant.
    const started = await call(`${api.url}/api/runs`, { method: 'POST', headers: auth, json: { agent_id: 'echo', session_id: 'readme-1' } });
    expect(started.status).toBe(202);
    expect(await api.backend.store.sessions.getSession('acme', 'readme-1')).toMatchObject({ id: 'readme-1' });
    expect(await api.backend.store.sessions.getSession('DefaultTenant', 'readme-1')).toBeNull();
  });
});
