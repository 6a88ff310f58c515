import { afterAll, beforeAll, expect, it } from 'vitest';
import { ensureBuilt } from '../support/build.js';
import { runCli, startApi, type CliProcess } from './cli.js';

/** `agentplane api` in JWT mode with RBAC, issuer and audience checks, and tokens from `agentplane token`. */
const JWT = {
  SERVICE_JWT_SECRET: 'a-development-secret-of-at-least-32-bytes',
  SERVICE_JWT_ISSUER: 'https://issuer.test',
  SERVICE_JWT_AUDIENCE: 'agentplane-tests',
};
let url: string;
let server: CliProcess;

beforeAll(async () => {
  await ensureBuilt();
  ({ url, server } = await startApi('api', { SERVICE_AUTH: 'jwt', SERVICE_RBAC: 'true', ...JWT }));
}, 300_000);
afterAll(async () => {
  if (server) expect(await server.stop()).toBe(0);
});

/** `agentplane token …` with the API's JWT settings in the environment, as an operator would run it. */
async function mint(...args: string[]): Promise<string> {
  const minted = await runCli(['token', ...args], JWT);
  expect(minted).toMatchObject({ code: 0, stderr: '' });
  return minted.stdout.trim();
}

it('mints a token the API in JWT mode accepts, with the role and tenant asked for', async () => {
  const token = await mint('--role', 'user', '--tenant', 'Acme', '--sub', 'alice', '--expires-in', '10m');
  expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  const started = await runCli(['runs', 'start', 'echo', '--input', '{"text":"jwt"}', '--wait', '--json'], { AGENTPLANE_URL: url, AGENTPLANE_TOKEN: token });
  expect(started).toMatchObject({ code: 0, stderr: '' });
  const run = JSON.parse(started.stdout);
  expect(run).toMatchObject({ status: 'completed', state: { text: 'jwt', echoed: true } });

  // The run is in the token's tenant: listed there, invisible to another tenant.
  const listed = await runCli(['sessions', 'list', '--json', '--url', url, '--token', token]);
  expect(JSON.parse(listed.stdout).sessions).toEqual([expect.objectContaining({ id: run.session_id, tenant_id: 'Acme' })]);
  const other = await mint('--tenant', 'Other');
  const hidden = await runCli(['sessions', 'state', run.session_id, '--url', url, '--token', other]);
  expect(hidden).toMatchObject({ code: 1, stderr: expect.stringMatching(/^agentplane: 404 not_found: /) });
});

it('prints the claims with --json: sub, roles, tenant_id, iss, aud, iat and exp', async () => {
  const minted = await runCli(['token', '--role', 'admin', '--expires-in', '3600', '--json'], JWT);
  expect(minted.code).toBe(0);
  const { token, claims } = JSON.parse(minted.stdout);
  expect(token).toMatch(/^eyJ/);
  expect(claims).toMatchObject({ sub: 'dev', roles: ['admin'], tenant_id: 'DefaultTenant', iss: JWT.SERVICE_JWT_ISSUER, aud: JWT.SERVICE_JWT_AUDIENCE });
  expect(claims.exp - claims.iat).toBe(3600);
});

it('is refused as the API says: no token 401, a viewer 403, another secret or audience 401; bad options exit 2', async () => {
  const start = ['runs', 'start', 'echo', '--url', url];
  expect(await runCli(start)).toMatchObject({ code: 1, stderr: expect.stringMatching(/^agentplane: 401 unauthorized: A bearer token is required\./) });
  const viewer = await mint('--role', 'viewer');
  expect(await runCli([...start, '--token', viewer])).toMatchObject({ code: 1, stderr: expect.stringMatching(/^agentplane: 403 forbidden: /) });
  const forged = (await runCli(['token', '--secret', 'another-secret-that-is-32-bytes-long!!'], JWT)).stdout.trim();
  expect(await runCli([...start, '--token', forged])).toMatchObject({ code: 1, stderr: expect.stringMatching(/^agentplane: 401 unauthorized: The bearer token is invalid\./) });
  const elsewhere = (await runCli(['token', '--audience', 'someone-else'], JWT)).stdout.trim();
  expect(await runCli([...start, '--token', elsewhere])).toMatchObject({ code: 1, stderr: expect.stringMatching(/^agentplane: 401 unauthorized: /) });

  expect(await runCli(['token'])).toMatchObject({ code: 2, stderr: 'agentplane: token needs the secret: set SERVICE_JWT_SECRET or pass --secret.\n' });
  expect(await runCli(['token', '--secret', 'short'])).toMatchObject({ code: 2, stderr: expect.stringContaining('at least 32 bytes') });
  expect(await runCli(['token', '--role', 'root'], JWT)).toMatchObject({ code: 2, stderr: expect.stringContaining('Allowed choices are viewer, user, admin') });
  expect(await runCli(['token', '--expires-in', 'soon'], JWT)).toMatchObject({ code: 2, stderr: expect.stringContaining('--expires-in') });
});
