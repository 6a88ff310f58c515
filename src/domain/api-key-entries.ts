import { createHash } from 'node:crypto';
import { DEFAULT_TENANT, ID_PATTERN, ROLE_RANK, type Role } from './types.js';

/** One parsed `SERVICE_API_KEYS` entry; the plaintext key is not kept. */
export interface ApiKeyEntry {
  /** SHA-256 of the key. */
  digest: Buffer;
  role: Role;
  tenant: string;
}

/** The SHA-256 of a key: what is kept of it and compared. */
export function digestKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/**
 * Parses `key:role:tenant,…`. Only the key is required; a missing role is `viewer`, a missing
 * tenant `DefaultTenant`. Throws a plain Error describing the first bad entry (never echoing
 * the key itself) for an empty entry, an empty key, whitespace in a key, an unknown role,
 * a bad tenant name, more than three fields, or a duplicate key.
 */
export function parseApiKeys(raw: string | undefined): ApiKeyEntry[] {
  if (raw === undefined || raw === '') return [];
  const seen = new Set<string>();
  return raw.split(',').map((entry, index) => {
    const where = `entry ${index + 1}`;
    const fields = entry.split(':');
    if (entry.trim() === '') throw new Error(`${where} is empty`);
    if (fields.length > 3) throw new Error(`${where} has more than three colon-separated fields`);
    const [key = '', role = '', tenant = ''] = fields;
    if (key === '') throw new Error(`${where} has an empty key`);
    if (/\s/.test(key)) throw new Error(`${where} has a key containing whitespace`);
    if (role !== '' && !(role in ROLE_RANK)) throw new Error(`${where} names unknown role "${role}"`);
    if (tenant !== '' && !ID_PATTERN.test(tenant)) throw new Error(`${where} names an invalid tenant`);
    const digest = digestKey(key);
    if (seen.has(digest.toString('hex'))) throw new Error(`${where} repeats an earlier key`);
    seen.add(digest.toString('hex'));
    return { digest, role: (role || 'viewer') as Role, tenant: tenant || DEFAULT_TENANT };
  });
}
