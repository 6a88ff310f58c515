import { z } from 'zod';
import { ConfigError } from '../../config.js';
import { DEFAULT_STORAGE_LIMITS, DEFAULT_TENANT, ID_PATTERN } from '../../domain/types.js';
import { MAX_BODY_BYTES } from '../shared/read-raw-body.js';
import { githubSignature } from './github-signature.js';
import type { SignatureVerifier } from '../shared/signature-verifier.js';
import { standardWebhooksSignature } from './standard-webhooks-signature.js';

/** Deliveries of `type` (or of every type for `*`) start a run of `agentId`. */
export interface WebhookRoute {
  type: string;
  agentId: string;
}

export type SignatureScheme = 'none' | 'standard-webhooks' | 'github';

/** Configuration of `npm run start:webhooks`, read by {@link loadWebhooksConfig}. */
export interface WebhooksConfig {
  /** WEBHOOK_HOST; unset, `0.0.0.0`, or `127.0.0.1` when neither a secret nor a signature is checked. */
  host: string;
  port: number;
  /** Shared secret expected in X-Webhook-Secret; empty when the check is off. */
  secret: string;
  signatureScheme: SignatureScheme;
  /** The verifier of `signatureScheme`, built from WEBHOOK_SIGNING_SECRET; undefined for `none`. */
  signature: SignatureVerifier | undefined;
  /** Tenant of the runs started. */
  tenant: string;
  /** WEBHOOK_INSECURE: the operator accepts a receiver with neither a secret nor a signature. */
  insecure: boolean;
  routes: readonly WebhookRoute[];
  /**
   * Largest delivery body read (413 past it): 1 MiB, or less when SERVICE_MAX_STATE_BYTES could
   * not hold a 1 MiB payload with {@link WEBHOOK_STATE_RESERVE_BYTES}; see {@link webhookBodyLimit}.
   */
  maxBodyBytes: number;
}

/**
 * What a run's state keeps beside a delivery's payload: the envelope
 * `{"webhook":{"type","source",…}}` (type and source are request headers, which Node caps at
 * 16 KiB, up to twice that once JSON-escaped) and room for the first keys the agent adds.
 */
export const WEBHOOK_STATE_RESERVE_BYTES = 64 * 1024;

/** The smallest body limit the receiver starts with: below it, it could take no real delivery. */
const MIN_BODY_BYTES = 1024;

/**
 * The receiver's body limit for runs whose state may hold `maxStateBytes`
 * (SERVICE_MAX_STATE_BYTES): the spec's 1 MiB, lowered so that a delivery it accepts always has
 * {@link WEBHOOK_STATE_RESERVE_BYTES} left in the state of its run. A delivery past it is refused
 * up front (413, nothing read beyond the limit, no run) rather than accepted and then refused by
 * the store, which the sender would hear as a 500 and redeliver forever. Throws
 * {@link ConfigError} naming SERVICE_MAX_STATE_BYTES when that leaves less than 1 KiB.
 */
export function webhookBodyLimit(maxStateBytes: number): number {
  const limit = Math.min(MAX_BODY_BYTES, maxStateBytes - WEBHOOK_STATE_RESERVE_BYTES);
  if (limit < MIN_BODY_BYTES) {
    throw new ConfigError(
      'SERVICE_MAX_STATE_BYTES',
      `the webhook receiver needs at least ${WEBHOOK_STATE_RESERVE_BYTES + MIN_BODY_BYTES} (${WEBHOOK_STATE_RESERVE_BYTES} bytes for a delivery's envelope and the agent's keys, and room for its payload); it is ${maxStateBytes}`,
    );
  }
  return limit;
}

const envSchema = z.object({
  // Unset: every interface, or loopback for a receiver that checks neither a secret nor a signature.
  WEBHOOK_HOST: z.string().min(1).optional(),
  WEBHOOK_PORT: z.coerce.number().int().min(0).max(65535).default(8422),
  WEBHOOK_SECRET: z.string().default(''),
  WEBHOOK_SIGNATURE: z.enum(['none', 'standard-webhooks', 'github']).default('none'),
  WEBHOOK_SIGNING_SECRET: z.string().default(''),
  WEBHOOK_TENANT: z.string().regex(ID_PATTERN).default(DEFAULT_TENANT),
  WEBHOOK_ROUTES: z.string().default(''),
  WEBHOOK_INSECURE: z.enum(['true', 'false', '1', '0']).default('false').transform((v) => v === 'true' || v === '1'),
});

/** Every environment variable {@link loadWebhooksConfig} reads (the worker reads src/config.ts's too). */
export const WEBHOOK_CONFIG_VARIABLES: readonly string[] = Object.freeze(Object.keys(envSchema.shape));

/** The schema of those variables, for the settings reference. */
export const WEBHOOK_CONFIG_SCHEMA = envSchema;

/**
 * Reads and validates the webhook worker's variables from `env` (the worker passes
 * `process.env`). WEBHOOK_ROUTES is a comma-separated list of `<event type>=<agent id>`, the
 * type being an exact `X-Event-Type` value or `*` for every delivery, e.g.
 * `push=echo,deploy=human-review`. Without WEBHOOK_SECRET and without a WEBHOOK_SIGNATURE scheme
 * it refuses (anyone could start runs) unless WEBHOOK_INSECURE=true. `maxStateBytes` is the
 * state limit of the runs it starts (SERVICE_MAX_STATE_BYTES, read by src/config.ts), from which
 * the body limit follows ({@link webhookBodyLimit}). Throws {@link ConfigError} naming the bad
 * variable; the result is frozen.
 */
export function loadWebhooksConfig(
  env: Readonly<Record<string, string | undefined>>,
  maxStateBytes: number = DEFAULT_STORAGE_LIMITS.maxStateBytes,
): WebhooksConfig {
  // An empty variable means unset, as in shells where `VAR=` is the way to clear it.
  const parsed = envSchema.safeParse(Object.fromEntries(Object.entries(env).filter(([, value]) => value !== '')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(String(issue.path[0] ?? 'environment'), issue.message);
  }
  const vars = parsed.data;
  const open = vars.WEBHOOK_SECRET === '' && vars.WEBHOOK_SIGNATURE === 'none';
  const config: WebhooksConfig = Object.freeze({
    host: vars.WEBHOOK_HOST ?? (open ? '127.0.0.1' : '0.0.0.0'),
    port: vars.WEBHOOK_PORT,
    secret: vars.WEBHOOK_SECRET,
    signatureScheme: vars.WEBHOOK_SIGNATURE,
    signature: buildSignature(vars.WEBHOOK_SIGNATURE, vars.WEBHOOK_SIGNING_SECRET),
    tenant: vars.WEBHOOK_TENANT,
    insecure: vars.WEBHOOK_INSECURE,
    routes: Object.freeze(parseRoutes(vars.WEBHOOK_ROUTES)),
    maxBodyBytes: webhookBodyLimit(maxStateBytes),
  });
  if (config.secret === '' && config.signatureScheme === 'none' && !config.insecure) {
    throw new ConfigError(
      'WEBHOOK_SECRET',
      'the receiver would accept deliveries from anyone: set WEBHOOK_SECRET or WEBHOOK_SIGNATURE (with WEBHOOK_SIGNING_SECRET), or WEBHOOK_INSECURE=true to accept that',
    );
  }
  return config;
}

function buildSignature(scheme: SignatureScheme, secret: string): SignatureVerifier | undefined {
  if (scheme === 'none') return undefined;
  if (secret === '') throw new ConfigError('WEBHOOK_SIGNING_SECRET', `WEBHOOK_SIGNATURE=${scheme} needs a signing secret`);
  try {
    return scheme === 'github' ? githubSignature(secret) : standardWebhooksSignature(secret);
  } catch (error) {
    throw new ConfigError('WEBHOOK_SIGNING_SECRET', (error as Error).message);
  }
}

function parseRoutes(raw: string): WebhookRoute[] {
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const match = /^([^=\s]+)=([^=\s]+)$/.exec(entry);
      if (!match || !ID_PATTERN.test(match[2]!)) {
        throw new ConfigError('WEBHOOK_ROUTES', `expected <event type>=<agent id>, got "${entry}"`);
      }
      return Object.freeze({ type: match[1]!, agentId: match[2]! });
    });
}
