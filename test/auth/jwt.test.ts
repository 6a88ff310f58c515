import { base64url, SignJWT, UnsecuredJWT, type CryptoKey, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Authenticator } from '../../src/auth/authenticator.js';
import { createJwtAuthenticator } from '../../src/auth/jwt.js';
import type { JwtOptions } from '../../src/auth/options.js';
import { isAppError } from '../../src/domain/errors.js';
import type { Principal } from '../../src/domain/types.js';
import { statusOf } from '../../src/http/errors.js';
import { JwksServer, rsaSigningKey, type SigningKey } from './jwks-server.js';
import { expectNoSecretsIn, send, startSecuredApi, type SecuredApi } from './secured-api.js';

const ISSUER = 'https://idp.example.test';
const AUDIENCE = 'agentplane';
const SECRET = 'hs256-shared-secret-of-at-least-32-bytes!';
const TRUSTED = 'https://trusted.example.test';

interface Outcome {
  status: number;
  principal?: Principal;
  challenge?: string;
  message?: string;
  /** The logged reason (the error's cause), to prove a row fails for the reason it names. */
  detail?: string;
}

/** Authenticates one bearer token and reduces the result to what the client would see. */
async function attempt(auth: Authenticator, token: string): Promise<Outcome> {
  try {
    return { status: 200, principal: await auth.authenticate({ authorization: `Bearer ${token}` }) };
  } catch (error) {
    if (!isAppError(error)) throw error;
    return {
      status: statusOf(error.code),
      challenge: error.headers['WWW-Authenticate'],
      message: error.message,
      detail: (error.cause as Error | undefined)?.message,
    };
  }
}

interface TokenSpec {
  claims?: JWTPayload;
  /** Claims to drop from the defaults. */
  without?: string[];
  alg?: 'RS256' | 'HS256';
  key?: CryptoKey | Uint8Array;
  kid?: string;
  exp?: number | string | null;
  nbf?: number | string;
  /** Issued-at: now by default, a number of seconds since the epoch, or null for none. */
  iat?: number | null;
  iss?: string;
  aud?: string;
}

let server: JwksServer;
let jwksUrl: string;
let current: SigningKey;
let attacker: SigningKey;

async function token(spec: TokenSpec = {}): Promise<string> {
  const claims: JWTPayload = { sub: 'alice', tenant_id: 'TenantA', roles: ['user'], ...spec.claims };
  for (const name of spec.without ?? []) delete claims[name];
  const alg = spec.alg ?? 'RS256';
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg, kid: spec.kid ?? current.kid })
    .setIssuer(spec.iss ?? ISSUER)
    .setAudience(spec.aud ?? AUDIENCE);
  if (spec.iat !== null) jwt.setIssuedAt(spec.iat);
  if (spec.exp !== null) jwt.setExpirationTime(spec.exp ?? '1h');
  if (spec.nbf !== undefined) jwt.setNotBefore(spec.nbf);
  return jwt.sign(spec.key ?? (alg === 'HS256' ? new TextEncoder().encode(SECRET) : current.privateKey));
}

function authenticator(overrides: JwtOptions = {}): Authenticator {
  return createJwtAuthenticator({
    jwksUrl,
    secret: SECRET,
    issuer: ISSUER,
    audience: AUDIENCE,
    trustedIssuers: [],
    ...overrides,
  });
}

beforeAll(async () => {
  server = new JwksServer();
  jwksUrl = await server.start();
  current = await rsaSigningKey('key-1');
  attacker = await rsaSigningKey('key-1');
  server.keys = [current.publicJwk];
});

afterAll(() => server.close());

interface Row {
  name: string;
  token: () => Promise<string>;
  options?: JwtOptions;
  status: 200 | 401 | 503;
  because?: RegExp;
  tenant?: string;
  role?: Principal['role'];
}

const HOUR = 3600;
const now = () => Math.floor(Date.now() / 1000);

const rows: Row[] = [
  { name: 'a valid RS256 token from the key set', token: () => token(), status: 200, tenant: 'TenantA', role: 'user' },
  { name: 'a valid HS256 token', token: () => token({ alg: 'HS256' }), status: 200, tenant: 'TenantA' },
  {
    name: 'alg none (unsecured JWT)',
    token: async () =>
      new UnsecuredJWT({ sub: 'alice', tenant_id: 'TenantA', roles: ['admin'] })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setExpirationTime('1h')
        .encode(),
    status: 401, because: /ALG_NOT_ALLOWED/,
  },
  {
    name: 'HS256 signed with the RSA public key (PEM) as the secret, JWKS configured',
    token: () => token({ alg: 'HS256', key: new TextEncoder().encode(current.publicPem) }),
    status: 401, because: /SIGNATURE_VERIFICATION_FAILED/,
  },
  {
    name: 'HS256 signed with the RSA public key, only RS256 configured (static PEM)',
    token: () => token({ alg: 'HS256', key: new TextEncoder().encode(current.publicPem) }),
    options: { jwksUrl: undefined, secret: undefined, publicKeyPem: '' },
    status: 401, because: /ALG_NOT_ALLOWED/,
  },
  {
    name: 'HS256 signed with the RSA public key as JWK JSON',
    token: () => token({ alg: 'HS256', key: new TextEncoder().encode(JSON.stringify(current.publicJwk)) }),
    status: 401, because: /SIGNATURE_VERIFICATION_FAILED/,
  },
  {
    name: 'RS256 when only HS256 is configured',
    token: () => token(),
    options: { jwksUrl: undefined },
    status: 401, because: /ALG_NOT_ALLOWED/,
  },
  { name: 'expired an hour ago', token: () => token({ exp: now() - HOUR }), status: 401, because: /ERR_JWT_EXPIRED/ },
  { name: 'nbf an hour in the future', token: () => token({ nbf: now() + HOUR }), status: 401, because: /"nbf"/ },
  { name: 'wrong iss', token: () => token({ iss: 'https://evil.example.test' }), status: 401, because: /"iss"/ },
  { name: 'wrong aud', token: () => token({ aud: 'another-service' }), status: 401, because: /"aud"/ },
  { name: 'no exp from an untrusted issuer', token: () => token({ exp: null }), status: 401, because: /no expiry/ },
  {
    name: 'no exp from a trusted issuer',
    token: () => token({ exp: null, iss: TRUSTED }),
    options: { issuer: undefined, trustedIssuers: [TRUSTED] },
    status: 200,
  },
  {
    name: 'no exp from an issuer trusted only under another name',
    token: () => token({ exp: null, iss: ISSUER }),
    options: { trustedIssuers: [TRUSTED] },
    status: 401, because: /no expiry/,
  },
  { name: 'iat an hour in the future', token: () => token({ iat: now() + HOUR }), status: 401, because: /issued in the future/ },
  { name: 'iat 20 s in the future (within the clock skew)', token: () => token({ iat: now() + 20 }), status: 200 },
  { name: 'exp in the year 5138', token: () => token({ exp: 99_999_999_999 }), status: 401, because: /lives longer than the maximum token age/ },
  { name: 'a two-day token (over the default day)', token: () => token({ exp: '48h' }), status: 401, because: /lives longer/ },
  { name: 'a two-day token, SERVICE_JWT_MAX_AGE=0 (no bound)', token: () => token({ exp: '48h' }), options: { maxAgeSec: 0 }, status: 200 },
  { name: 'a two-day token, SERVICE_JWT_MAX_AGE of three days', token: () => token({ exp: '48h' }), options: { maxAgeSec: 3 * 86_400 }, status: 200 },
  { name: 'iat two days ago, exp in an hour', token: () => token({ iat: now() - 48 * HOUR, exp: now() + HOUR }), status: 401, because: /older than the maximum token age/ },
  { name: 'no iat, exp in an hour', token: () => token({ iat: null }), status: 200 },
  { name: 'no iat, exp in two days', token: () => token({ iat: null, exp: '48h' }), status: 401, because: /lives longer/ },
  {
    name: 'no exp from a trusted issuer, issued a week ago',
    token: () => token({ exp: null, iss: TRUSTED, iat: now() - 7 * 24 * HOUR }),
    options: { issuer: undefined, trustedIssuers: [TRUSTED] },
    status: 401, because: /older than the maximum token age/,
  },
  {
    name: 'neither exp nor iat from a trusted issuer',
    token: () => token({ exp: null, iat: null, iss: TRUSTED }),
    options: { issuer: undefined, trustedIssuers: [TRUSTED] },
    status: 401, because: /neither an expiry nor an issue time/,
  },
  { name: 'bad signature (another key under the same kid)', token: () => token({ key: attacker.privateKey }), status: 401, because: /SIGNATURE_VERIFICATION_FAILED/ },
  {
    name: 'payload tampered after signing (viewer raised to admin)',
    token: async () => {
      const [header, , signature] = (await token({ claims: { roles: 'viewer' } })).split('.');
      const forged = base64url.encode(
        JSON.stringify({ sub: 'alice', tenant_id: 'TenantA', roles: 'admin', iss: ISSUER, aud: AUDIENCE, exp: now() + HOUR }),
      );
      return `${header}.${forged}.${signature}`;
    },
    status: 401, because: /SIGNATURE_VERIFICATION_FAILED/,
  },
  { name: 'truncated token', token: async () => (await token()).slice(0, -12), status: 401, because: /SIGNATURE_VERIFICATION_FAILED/ },
  { name: 'two segments only', token: async () => (await token()).split('.').slice(0, 2).join('.'), status: 401, because: /ERR_JWS_INVALID/ },
  { name: 'not a JWT at all', token: async () => 'not-a-jwt', status: 401, because: /ERR_JWS_INVALID/ },
  { name: 'an unknown kid', token: () => token({ kid: 'key-unknown', key: attacker.privateKey }), status: 401, because: /NO_MATCHING_KEY/ },
  {
    name: 'an embedded attacker jwk in the header',
    token: async () =>
      new SignJWT({ sub: 'alice', tenant_id: 'TenantA', roles: 'admin' })
        .setProtectedHeader({ alg: 'RS256', jwk: attacker.publicJwk })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setExpirationTime('1h')
        .sign(attacker.privateKey),
    status: 401, because: /SIGNATURE_VERIFICATION_FAILED/,
  },
  { name: 'no tenant claim', token: () => token({ without: ['tenant_id'] }), status: 401, because: /no tenant/ },
  {
    name: 'no tenant claim with SERVICE_JWT_DEFAULT_TENANT',
    token: () => token({ without: ['tenant_id'] }),
    options: { defaultTenant: 'Fallback' },
    status: 200,
    tenant: 'Fallback',
  },
  {
    name: 'a tenant name outside the id pattern, even with a default tenant',
    token: () => token({ claims: { tenant_id: 'Tenant A/../B' } }),
    options: { defaultTenant: 'Fallback' },
    status: 401, because: /invalid tenant/,
  },
  { name: 'a non-string tenant', token: () => token({ claims: { tenant_id: 42 } }), status: 401, because: /invalid tenant/ },
  {
    name: 'the tenant read from SERVICE_JWT_TENANT_CLAIM',
    token: () => token({ claims: { org: 'OrgB' } }),
    options: { tenantClaim: 'org' },
    status: 200,
    tenant: 'OrgB',
  },
  { name: 'no sub', token: () => token({ without: ['sub'] }), status: 401, because: /no subject/ },
  { name: 'no roles claim is viewer', token: () => token({ without: ['roles'] }), status: 200, role: 'viewer' },
  { name: 'roles as a string', token: () => token({ claims: { roles: 'admin' } }), status: 200, role: 'admin' },
  {
    name: 'the highest known role of a list, unknown ones ignored',
    token: () => token({ claims: { roles: ['viewer', 'superuser', 'user'] } }),
    status: 200,
    role: 'user',
  },
  {
    name: 'only unknown roles is viewer',
    token: () => token({ claims: { roles: ['superuser', 'constructor'] } }),
    status: 200,
    role: 'viewer',
  },
  { name: 'a malformed roles claim', token: () => token({ claims: { roles: { admin: true } } }), status: 401, because: /malformed roles/ },
];

describe('JWT attack table (local JWKS server)', () => {
  it.each(rows)('$name → $status', async (row) => {
    const options = { ...row.options };
    if (options.publicKeyPem === '') options.publicKeyPem = current.publicPem;
    const raw = await row.token();
    const outcome = await attempt(authenticator(options), raw);
    expect(outcome.status).toBe(row.status);
    if (row.status === 200) {
      expect(outcome.principal?.kind).toBe('jwt');
      expect(outcome.principal?.subject).toBe('alice');
      if (row.tenant) expect(outcome.principal?.tenant).toBe(row.tenant);
      if (row.role) expect(outcome.principal?.role).toBe(row.role);
    } else {
      expect(outcome.challenge).toMatch(/^Bearer realm="agentplane"/);
      expect(outcome.message).not.toContain(raw);
      if (row.because) expect(outcome.detail).toMatch(row.because);
    }
  });

  it('answers 401 with the bare challenge when no bearer token is sent', async () => {
    for (const authorization of [undefined, '', 'Basic YWxpY2U6c2VjcmV0', 'Bearer']) {
      const error = await authenticator()
        .authenticate({ authorization })
        .catch((e: unknown) => e);
      expect(isAppError(error) && error.code).toBe('unauthorized');
      if (isAppError(error)) expect(error.headers['WWW-Authenticate']).toMatch(/^Bearer realm="agentplane"/);
    }
  });

  it('accepts the RS256 static PEM key and binds it to RS256 only', async () => {
    const auth = authenticator({ jwksUrl: undefined, secret: undefined, publicKeyPem: current.publicPem });
    expect((await attempt(auth, await token())).status).toBe(200);
    expect((await attempt(auth, await token({ alg: 'HS256' }))).status).toBe(401);
  });

  it('answers 503, not 401 or 200, while the key set cannot be fetched', async () => {
    server.failing = true;
    try {
      expect((await attempt(authenticator(), await token())).status).toBe(503);
    } finally {
      server.failing = false;
    }
  });
});

/** The env that configures an app like `authenticator(overrides)`. */
function envOf(options: JwtOptions): Record<string, string> {
  const all: JwtOptions = { jwksUrl, secret: SECRET, issuer: ISSUER, audience: AUDIENCE, trustedIssuers: [], ...options };
  const env: Record<string, string> = { SERVICE_AUTH: 'jwt', SERVICE_RBAC: 'true' };
  const set = (name: string, value: string | undefined) => {
    if (value !== undefined && value !== '') env[name] = value;
  };
  set('SERVICE_JWT_JWKS_URL', all.jwksUrl);
  set('SERVICE_JWT_SECRET', all.secret);
  set('SERVICE_JWT_PUBLIC_KEY', all.publicKeyPem);
  set('SERVICE_JWT_ISSUER', all.issuer);
  set('SERVICE_JWT_AUDIENCE', all.audience);
  set('SERVICE_JWT_TRUSTED_ISSUERS', all.trustedIssuers?.join(','));
  set('SERVICE_JWT_TENANT_CLAIM', all.tenantClaim);
  set('SERVICE_JWT_DEFAULT_TENANT', all.defaultTenant);
  set('SERVICE_JWT_MAX_AGE', all.maxAgeSec?.toString());
  return env;
}

describe('JWT attack table over HTTP (GET /api/sessions, RBAC on)', () => {
  const logs: string[] = [];
  const sent: string[] = [];
  const apps = new Map<string, Promise<SecuredApi>>();
  const appFor = (options: JwtOptions) => {
    const env = envOf(options);
    const key = JSON.stringify(env);
    if (!apps.has(key)) apps.set(key, startSecuredApi(env, { logs }));
    return apps.get(key)!;
  };
  afterAll(async () => {
    for (const app of apps.values()) await (await app).close();
  });

  it.each(rows)('$name → $status', async (row) => {
    const options = { ...row.options };
    if (options.publicKeyPem === '') options.publicKeyPem = current.publicPem;
    const app = await appFor(options);
    const raw = await row.token();
    sent.push(raw);
    const answer = await send(`${app.url}/api/sessions`, { headers: { Authorization: `Bearer ${raw}` } });
    expect(answer.status).toBe(row.status);
    if (row.status === 401) {
      expect(answer.headers.get('WWW-Authenticate')).toBe('Bearer realm="agentplane", error="invalid_token"');
      expect(answer.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    }
  });

  it('answers 503 while the key set cannot be fetched', async () => {
    const app = await appFor({ secret: undefined });
    server.failing = true;
    try {
      const answer = await send(`${app.url}/api/sessions`, { headers: { Authorization: `Bearer ${await token()}` } });
      expect(answer.status).toBe(503);
      expect((answer.body as { error: { code: string } }).error.code).toBe('unavailable');
    } finally {
      server.failing = false;
    }
  });

  it('writes neither the secret nor any token into a log line', () => {
    expect(logs.some((line) => line.includes('"status":401'))).toBe(true);
    // A token's signature alone is enough to recognise a logged token.
    expectNoSecretsIn(logs, [SECRET, ...sent, ...sent.map((t) => t.split('.')[2]).filter((sig): sig is string => Boolean(sig))]);
  });
});

describe('JWKS key rotation', () => {
  it('accepts a kid served later, without restart, once the refetch cooldown allows', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const rotation = new JwksServer();
    const url = await rotation.start();
    try {
      const first = await rsaSigningKey('2026-01');
      const second = await rsaSigningKey('2026-02');
      rotation.keys = [first.publicJwk];
      const auth = createJwtAuthenticator({ jwksUrl: url, issuer: ISSUER, audience: AUDIENCE });
      const signed = (key: SigningKey) =>
        new SignJWT({ sub: 'alice', tenant_id: 'TenantA' })
          .setProtectedHeader({ alg: 'RS256', kid: key.kid })
          .setIssuer(ISSUER)
          .setAudience(AUDIENCE)
          .setExpirationTime('1h')
          .sign(key.privateKey);

      expect((await attempt(auth, await signed(first))).status).toBe(200);
      expect(rotation.fetches).toBe(1);

      // The issuer rotates: the new key is published and tokens signed with it appear.
      rotation.keys = [first.publicJwk, second.publicJwk];
      // Within the cooldown an unknown kid does not make us fetch again (forged kids are cheap).
      expect((await attempt(auth, await signed(second))).status).toBe(401);
      expect(rotation.fetches).toBe(1);

      vi.setSystemTime(Date.now() + 31_000);
      expect((await attempt(auth, await signed(second))).status).toBe(200);
      expect(rotation.fetches).toBe(2);
      // The old key keeps working while it is still published; cached, no further fetch.
      expect((await attempt(auth, await signed(first))).status).toBe(200);
      expect(rotation.fetches).toBe(2);

      // Retiring the old key: after the cache age its tokens stop working.
      rotation.keys = [second.publicJwk];
      vi.setSystemTime(Date.now() + 601_000);
      expect((await attempt(auth, await signed(first))).status).toBe(401);
      expect((await attempt(auth, await signed(second))).status).toBe(200);
    } finally {
      vi.useRealTimers();
      await rotation.close();
    }
  });

  it('refetches at most once per cooldown however many unknown kids arrive', async () => {
    const flood = new JwksServer();
    const url = await flood.start();
    try {
      flood.keys = [current.publicJwk];
      const auth = createJwtAuthenticator({ jwksUrl: url, issuer: ISSUER, audience: AUDIENCE });
      expect((await attempt(auth, await token())).status).toBe(200);
      for (let i = 0; i < 20; i += 1) {
        expect((await attempt(auth, await token({ kid: `forged-${i}`, key: attacker.privateKey }))).status).toBe(401);
      }
      expect(flood.fetches).toBe(1);
    } finally {
      await flood.close();
    }
  });
});

describe('JWKS fetch bounds', () => {
  it('answers 503 for a key set over the size cap, by its Content-Length or as it streams in', async () => {
    const big = new JwksServer();
    const url = await big.start();
    try {
      big.keys = [current.publicJwk];
      big.padding = 40_000;
      for (const chunked of [false, true]) {
        big.chunked = chunked;
        const capped = createJwtAuthenticator({ jwksUrl: url, issuer: ISSUER, audience: AUDIENCE, jwksMaxBytes: 20_000 });
        const outcome = await attempt(capped, await token());
        expect(outcome.status).toBe(503);
        expect(outcome.detail).toMatch(/larger than 20000 bytes/);
      }
      // The same set under the cap is read as usual.
      const roomy = createJwtAuthenticator({ jwksUrl: url, issuer: ISSUER, audience: AUDIENCE, jwksMaxBytes: 60_000 });
      expect((await attempt(roomy, await token())).status).toBe(200);
    } finally {
      await big.close();
    }
  });

  it('keeps the default cap at 1 MiB: a 2 MiB key set is refused', async () => {
    const big = new JwksServer();
    const url = await big.start();
    try {
      big.keys = [current.publicJwk];
      big.padding = 2 * 1024 * 1024;
      big.chunked = true;
      const outcome = await attempt(createJwtAuthenticator({ jwksUrl: url, issuer: ISSUER, audience: AUDIENCE }), await token());
      expect(outcome.status).toBe(503);
      expect(outcome.detail).toMatch(/larger than 1048576 bytes/);
    } finally {
      await big.close();
    }
  });

  it('backs off after a failed fetch: tokens meanwhile get 503 without a refetch, then it fetches again', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const down = new JwksServer();
    const url = await down.start();
    try {
      down.keys = [current.publicJwk];
      down.failing = true;
      const auth = createJwtAuthenticator({ jwksUrl: url, issuer: ISSUER, audience: AUDIENCE });
      for (let i = 0; i < 20; i += 1) expect((await attempt(auth, await token())).status).toBe(503);
      expect(down.fetches).toBe(1);

      vi.setSystemTime(Date.now() + 1_100);
      expect((await attempt(auth, await token())).status).toBe(503);
      expect(down.fetches).toBe(2);
      // The second failure doubles the wait to 2 s.
      vi.setSystemTime(Date.now() + 1_100);
      expect((await attempt(auth, await token())).status).toBe(503);
      expect(down.fetches).toBe(2);

      down.failing = false;
      vi.setSystemTime(Date.now() + 1_000);
      expect((await attempt(auth, await token())).status).toBe(200);
      expect(down.fetches).toBe(3);
    } finally {
      vi.useRealTimers();
      await down.close();
    }
  });
});
