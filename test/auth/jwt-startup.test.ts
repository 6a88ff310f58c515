import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../src/auth/create-authenticator.js';
import { authOptionsFromConfig } from '../../src/auth/options.js';
import { ConfigError, loadConfig } from '../../src/config.js';

const SECRET = 'hs256-shared-secret-of-at-least-32-bytes!';

function pem(type: 'rsa' | 'ec', bits = 2048): { publicPem: string; privatePem: string } {
  const pair =
    type === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: bits })
      : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    publicPem: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privatePem: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** What starting the process does: read the env, then build the authenticator. */
function start(env: Record<string, string>): void {
  createAuthenticator(authOptionsFromConfig(loadConfig(env)));
}

function variableOf(env: Record<string, string>): string | undefined {
  try {
    start(env);
    return undefined;
  } catch (error) {
    if (error instanceof ConfigError) return error.variable;
    throw error;
  }
}

const rsa = pem('rsa');

describe('JWT settings that stop the process at start', () => {
  const rows: Array<[string, Record<string, string>, string]> = [
    ['an unknown mode', { SERVICE_AUTH: 'oauth' }, 'SERVICE_AUTH'],
    ['jwt without any key', { SERVICE_AUTH: 'jwt', SERVICE_JWT_ISSUER: 'https://idp' }, 'SERVICE_JWT_SECRET'],
    ['a secret shorter than 32 bytes', { SERVICE_AUTH: 'jwt', SERVICE_JWT_SECRET: 'secret' }, 'SERVICE_JWT_SECRET'],
    ['a public key that is not PEM', { SERVICE_AUTH: 'jwt', SERVICE_JWT_PUBLIC_KEY: 'MIIBIjANBgkq' }, 'SERVICE_JWT_PUBLIC_KEY'],
    [
      'a PEM block with a broken body',
      { SERVICE_AUTH: 'jwt', SERVICE_JWT_PUBLIC_KEY: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----' },
      'SERVICE_JWT_PUBLIC_KEY',
    ],
    ['a private key instead of a public one', { SERVICE_AUTH: 'jwt', SERVICE_JWT_PUBLIC_KEY: rsa.privatePem }, 'SERVICE_JWT_PUBLIC_KEY'],
    ['an EC key for RS256', { SERVICE_AUTH: 'jwt', SERVICE_JWT_PUBLIC_KEY: pem('ec').publicPem }, 'SERVICE_JWT_PUBLIC_KEY'],
    ['an RSA key under 2048 bits', { SERVICE_AUTH: 'jwt', SERVICE_JWT_PUBLIC_KEY: pem('rsa', 1024).publicPem }, 'SERVICE_JWT_PUBLIC_KEY'],
    [
      'both a key-set URL and a static key',
      { SERVICE_AUTH: 'jwt', SERVICE_JWT_JWKS_URL: 'https://idp/jwks', SERVICE_JWT_PUBLIC_KEY: rsa.publicPem },
      'SERVICE_JWT_PUBLIC_KEY',
    ],
    ['a key-set URL that is not http(s)', { SERVICE_AUTH: 'jwt', SERVICE_JWT_JWKS_URL: 'ftp://idp/jwks' }, 'SERVICE_JWT_JWKS_URL'],
    ['a key-set URL that is not a URL', { SERVICE_AUTH: 'jwt', SERVICE_JWT_JWKS_URL: 'idp/jwks' }, 'SERVICE_JWT_JWKS_URL'],
    [
      'a default tenant outside the id pattern',
      { SERVICE_AUTH: 'jwt', SERVICE_JWT_SECRET: SECRET, SERVICE_JWT_DEFAULT_TENANT: 'a tenant' },
      'SERVICE_JWT_DEFAULT_TENANT',
    ],
    ['an empty tenant claim name', { SERVICE_AUTH: 'jwt', SERVICE_JWT_SECRET: SECRET, SERVICE_JWT_TENANT_CLAIM: '' }, 'SERVICE_JWT_TENANT_CLAIM'],
    ['RBAC that is not a boolean', { SERVICE_AUTH: 'jwt', SERVICE_JWT_SECRET: SECRET, SERVICE_RBAC: 'yes' }, 'SERVICE_RBAC'],
  ];

  it.each(rows)('%s → %s', (_name, env, variable) => {
    expect(variableOf(env)).toBe(variable);
  });

  it('never echoes the secret in the error', () => {
    try {
      start({ SERVICE_AUTH: 'jwt', SERVICE_JWT_SECRET: 'too-short-s3cr3t' });
    } catch (error) {
      expect(String(error)).not.toContain('too-short-s3cr3t');
      return;
    }
    throw new Error('expected a ConfigError');
  });
});

describe('JWT settings that start', () => {
  it.each<[string, Record<string, string>]>([
    ['a 32-byte secret', { SERVICE_AUTH: 'jwt', SERVICE_JWT_SECRET: SECRET }],
    ['a static PEM key', { SERVICE_AUTH: 'jwt', SERVICE_JWT_PUBLIC_KEY: rsa.publicPem }],
    ['a PEM on one line with literal \\n', { SERVICE_AUTH: 'jwt', SERVICE_JWT_PUBLIC_KEY: rsa.publicPem.trim().replace(/\n/g, '\\n') }],
    ['a key-set URL and a secret', { SERVICE_AUTH: 'jwt', SERVICE_JWT_JWKS_URL: 'https://idp/jwks', SERVICE_JWT_SECRET: SECRET }],
    ['mode none ignores JWT settings', { SERVICE_AUTH: 'none', SERVICE_RBAC: 'true' }],
  ])('%s', (_name, env) => {
    expect(variableOf(env)).toBeUndefined();
  });
});
