import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { parseApiKeys } from '../../src/domain/api-key-entries.js';
import { createApiKeyAuthenticator } from '../../src/auth/api-keys.js';
import { createAuthenticator } from '../../src/auth/create-authenticator.js';
import { authOptionsFromConfig } from '../../src/auth/options.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { isAppError } from '../../src/domain/errors.js';
import type { Principal } from '../../src/domain/types.js';

const ADMIN_KEY = 'ak_live_9f3c2b7e41d0aa58c6e2';
const VIEWER_KEY = 'ak_live_bare_key_without_role';
const KEYS = `${ADMIN_KEY}:admin:TenantA,ak_live_user_2:user:TenantB,${VIEWER_KEY}`;

async function attempt(headers: IncomingHttpHeaders, header?: string): Promise<{ status: number; principal?: Principal; challenge?: string }> {
  const auth = createApiKeyAuthenticator(parseApiKeys(KEYS), header);
  try {
    return { status: 200, principal: await auth.authenticate(headers) };
  } catch (error) {
    if (!isAppError(error) || error.code !== 'unauthorized') throw error;
    return { status: 401, challenge: error.headers['WWW-Authenticate'] };
  }
}

interface Row {
  name: string;
  headers: IncomingHttpHeaders;
  /** Header the server is configured to read. @defaultValue X-Api-Key */
  header?: string;
  status: 200 | 401;
  principal?: Omit<Principal, 'subject'>;
}

const rows: Row[] = [
  { name: 'the right key', headers: { 'x-api-key': ADMIN_KEY }, status: 200, principal: { tenant: 'TenantA', role: 'admin', kind: 'apikey' } },
  {
    name: 'an entry naming neither role nor tenant: viewer of DefaultTenant',
    headers: { 'x-api-key': VIEWER_KEY },
    status: 200,
    principal: { tenant: 'DefaultTenant', role: 'viewer', kind: 'apikey' },
  },
  { name: 'missing header', headers: {}, status: 401 },
  { name: 'empty header', headers: { 'x-api-key': '' }, status: 401 },
  { name: 'unknown key', headers: { 'x-api-key': 'ak_live_0000000000000000000' }, status: 401 },
  { name: 'right key as a bearer token', headers: { authorization: `Bearer ${ADMIN_KEY}` }, status: 401 },
  { name: 'right key in another header', headers: { 'x-api-token': ADMIN_KEY }, status: 401 },
  {
    name: 'right key in X-Api-Key while the header is renamed',
    headers: { 'x-api-key': ADMIN_KEY },
    header: 'X-Tenant-Key',
    status: 401,
  },
  {
    name: 'right key in the renamed header',
    headers: { 'x-tenant-key': ADMIN_KEY },
    header: 'X-Tenant-Key',
    status: 200,
    principal: { tenant: 'TenantA', role: 'admin', kind: 'apikey' },
  },
  { name: 'near miss: one character short', headers: { 'x-api-key': ADMIN_KEY.slice(0, -1) }, status: 401 },
  { name: 'near miss: one character more', headers: { 'x-api-key': `${ADMIN_KEY}0` }, status: 401 },
  { name: 'near miss: last character changed', headers: { 'x-api-key': `${ADMIN_KEY.slice(0, -1)}3` }, status: 401 },
  { name: 'near miss: upper case', headers: { 'x-api-key': ADMIN_KEY.toUpperCase() }, status: 401 },
  { name: 'near miss: with its role suffix', headers: { 'x-api-key': `${ADMIN_KEY}:admin` }, status: 401 },
  { name: 'near miss: the whole entry', headers: { 'x-api-key': `${ADMIN_KEY}:admin:TenantA` }, status: 401 },
  { name: 'near miss: two keys joined', headers: { 'x-api-key': `${ADMIN_KEY}, ak_live_user_2` }, status: 401 },
  { name: 'near miss: hex of its digest', headers: { 'x-api-key': 'a'.repeat(64) }, status: 401 },
];

describe('API key table', () => {
  it.each(rows)('$name → $status', async (row) => {
    const outcome = await attempt(row.headers, row.header);
    expect(outcome.status).toBe(row.status);
    if (row.principal) {
      expect(outcome.principal).toMatchObject(row.principal);
      // The subject identifies the key for quotas and logs without being the key.
      expect(outcome.principal?.subject).toMatch(/^apikey:[0-9a-f]{16}$/);
      expect(outcome.principal?.subject).not.toContain(ADMIN_KEY);
    } else {
      expect(outcome.challenge).toBe(`ApiKey realm="agentplane", header="${row.header ?? 'X-Api-Key'}"`);
    }
  });

  it('keeps only digests: no parsed entry holds the plaintext', () => {
    const entries = parseApiKeys(KEYS);
    expect(JSON.stringify(entries)).not.toContain(ADMIN_KEY);
    for (const entry of entries) expect(entry.digest).toHaveLength(32);
  });

  it('reads the header name from SERVICE_API_KEY_HEADER', async () => {
    const config = loadConfig({ SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: KEYS, SERVICE_API_KEY_HEADER: 'X-Tenant-Key' });
    const auth = createAuthenticator(authOptionsFromConfig(config));
    await expect(auth.authenticate({ 'x-tenant-key': ADMIN_KEY })).resolves.toMatchObject({ role: 'admin' });
    await expect(auth.authenticate({ 'x-api-key': ADMIN_KEY })).rejects.toMatchObject({ code: 'unauthorized' });
  });
});

describe('API key settings that stop the process at start', () => {
  const bad: Array<[string, string]> = [
    ['an unknown role', 'ak_secret_value:superuser:t'],
    ['an empty key', ':user:t'],
    ['an empty entry between two', 'ak_secret_value:user,,ak_other:user'],
    ['a trailing comma', 'ak_secret_value:user,'],
    ['only a comma', ','],
    ['only blanks', '   '],
    ['a key containing a space', 'ak secret value:user:t'],
    ['a key with a leading space', ' ak_secret_value:user'],
    ['a key containing a tab', 'ak_secret\tvalue:user'],
    ['four fields', 'ak_secret_value:user:t:extra'],
    ['a tenant outside the id pattern', 'ak_secret_value:user:bad tenant'],
    ['the same key twice', 'ak_secret_value:user,ak_secret_value:admin'],
  ];

  it.each(bad)('%s', (_name, keys) => {
    let error: unknown;
    try {
      loadConfig({ SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: keys });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe('SERVICE_API_KEYS');
    expect((error as ConfigError).message).not.toContain('secret');
  });

  it('apikey mode without keys', () => {
    expect(() => loadConfig({ SERVICE_AUTH: 'apikey' })).toThrow(/SERVICE_API_KEYS/);
  });

  it('a header name that is not a header name', () => {
    expect(() => loadConfig({ SERVICE_AUTH: 'apikey', SERVICE_API_KEYS: 'k1', SERVICE_API_KEY_HEADER: 'X Api Key' })).toThrow(
      /SERVICE_API_KEY_HEADER/,
    );
    expect(() => createApiKeyAuthenticator(parseApiKeys('k1'), 'X-Api-Key:')).toThrow(/SERVICE_API_KEY_HEADER/);
  });

  it('an empty key list given in code', () => {
    expect(() => createAuthenticator({ mode: 'apikey', apiKeys: [] })).toThrow(/SERVICE_API_KEYS/);
  });
});
