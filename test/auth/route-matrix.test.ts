import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roleAtLeast, type Role } from '../../src/domain/types.js';
import { requiredRole, type AnyRoute } from '../../src/http/route.js';
import { expectNoSecretsIn, send, startSecuredApi, type SecuredApi } from './secured-api.js';

/**
 * Every declared route × credential × RBAC on/off × auth mode, with the expected status computed
 * from the route declarations (`public`, `requiredRole`) and the spec's rules, never copied by
 * hand. A request that passes the gate must answer exactly what it answers without
 * authentication (404 for the missing ids used here, 400 for missing inputs, 200 for lists).
 */

const TENANT = 'MatrixTenant';
const SECRET = 'matrix-hs256-secret-0123456789abcdef';
const KEYS: Record<Role, string> = { viewer: 'mx-viewer-key', user: 'mx-user-key', admin: 'mx-admin-key' };

type Credential = 'none' | 'bad' | Role;
const CREDENTIALS: readonly Credential[] = ['none', 'bad', 'viewer', 'user', 'admin'];
type Mode = 'none' | 'jwt' | 'apikey';

const logs: string[] = [];
const credentialsSent: string[] = [];

interface Probe {
  route: AnyRoute;
  method: string;
  path: string;
}

/** One request per declared route, plus HEAD for GET routes; path parameters name missing ids. */
function probesOf(routes: readonly AnyRoute[]): Probe[] {
  return routes.flatMap((route) => {
    const path = route.path.replace(/:(\w+)/g, 'missing-$1');
    const probe = { route, path };
    return route.method === 'GET' ? [{ ...probe, method: 'GET' }, { ...probe, method: 'HEAD' }] : [{ ...probe, method: route.method }];
  });
}

/** The spec's rules: public routes never need a credential; otherwise 401, then RBAC's 403. */
function gate(route: AnyRoute, mode: Mode, rbac: boolean, credential: Credential): 401 | 403 | 'open' {
  if (route.public || mode === 'none') return 'open';
  if (credential === 'none' || credential === 'bad') return 401;
  if (rbac && !roleAtLeast(credential, requiredRole(route))) return 403;
  return 'open';
}

async function jwtFor(role: Role, secret = SECRET): Promise<string> {
  return new SignJWT({ tenant_id: TENANT, roles: [role] })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(`matrix-${role}`)
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(secret));
}

async function headersFor(mode: Mode, credential: Credential): Promise<Record<string, string>> {
  if (credential === 'none') return {};
  if (mode === 'apikey' || mode === 'none') {
    return { 'X-Api-Key': credential === 'bad' ? 'mx-wrong-key' : KEYS[credential] };
  }
  const token = credential === 'bad' ? await jwtFor('admin', 'another-secret-of-32-bytes-or-more!!') : await jwtFor(credential);
  credentialsSent.push(token);
  return { Authorization: `Bearer ${token}` };
}

function envFor(mode: Mode, rbac: boolean): Record<string, string> {
  const env: Record<string, string> = { SERVICE_AUTH: mode, SERVICE_RBAC: String(rbac) };
  if (mode === 'jwt') env.SERVICE_JWT_SECRET = SECRET;
  if (mode === 'apikey') env.SERVICE_API_KEYS = Object.entries(KEYS).map(([role, key]) => `${key}:${role}:${TENANT}`).join(',');
  return env;
}

const challenge: Record<'jwt' | 'apikey', RegExp> = {
  jwt: /^Bearer realm="agentplane"/,
  apikey: /^ApiKey realm="agentplane", header="X-Api-Key"$/,
};

// The reference: the same app without authentication, for what each request answers ungated.
const reference = await startSecuredApi({ SERVICE_AUTH: 'none' });
const probes = probesOf(reference.api.routes);
const ungated = new Map<string, number>();
for (const probe of probes) ungated.set(`${probe.method} ${probe.path}`, (await send(`${reference.url}${probe.path}`, { method: probe.method })).status);

afterAll(() => reference.close());

describe('the route list the matrix is generated from', () => {
  it('holds public and gated routes, and each gated one answers ungated with neither 401 nor 403', () => {
    expect(probes.some((p) => p.route.public)).toBe(true);
    expect(probes.some((p) => !p.route.public && requiredRole(p.route) === 'viewer')).toBe(true);
    expect(probes.some((p) => !p.route.public && requiredRole(p.route) === 'user')).toBe(true);
    for (const status of ungated.values()) expect([401, 403]).not.toContain(status);
  });
});

const configurations = (['none', 'jwt', 'apikey'] as const).flatMap((mode) => [true, false].map((rbac) => ({ mode, rbac })));

describe.each(configurations)('SERVICE_AUTH=$mode SERVICE_RBAC=$rbac', ({ mode, rbac }) => {
  let app: SecuredApi;

  beforeAll(async () => {
    app = await startSecuredApi(envFor(mode, rbac), { logs });
  });
  afterAll(() => app.close());

  it.each(probes.map((probe) => ({ ...probe, name: `${probe.method} ${probe.route.path}` })))('$name', async (probe) => {
    const expected: Record<string, number> = {};
    const actual: Record<string, number> = {};
    for (const credential of CREDENTIALS) {
      const verdict = gate(probe.route, mode, rbac, credential);
      expected[credential] = verdict === 'open' ? ungated.get(`${probe.method} ${probe.path}`)! : verdict;
      const answer = await send(`${app.url}${probe.path}`, { method: probe.method, headers: await headersFor(mode, credential) });
      actual[credential] = answer.status;
      if (answer.status === 401 && mode !== 'none') {
        expect(answer.headers.get('WWW-Authenticate')).toMatch(challenge[mode]);
      }
      if ((answer.status === 401 || answer.status === 403) && probe.method !== 'HEAD') {
        expect((answer.body as { error: { code: string } }).error.code).toBe(answer.status === 401 ? 'unauthorized' : 'forbidden');
      }
    }
    expect(actual).toEqual(expected);
  });
});

it('writes no key, secret or token of the matrix into any log line', () => {
  expect(logs.some((line) => line.includes('"status":403'))).toBe(true);
  expectNoSecretsIn(logs, [SECRET, ...Object.values(KEYS), 'mx-wrong-key', ...credentialsSent]);
});
