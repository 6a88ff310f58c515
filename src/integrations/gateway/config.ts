import { ConfigError } from '../../config.js';
import { DEFAULT_TENANT, ID_PATTERN, type Role } from '../../domain/types.js';

/** The settings every configured chat platform shares, read by {@link loadChatConfig}. */
export interface ChatPlatformConfig {
  botToken: string;
  /** The platform API base (tests point it at a local fake). */
  apiUrl: string;
  /** The agent or LangGraph graph that answers messages; undefined: messages are not answered. */
  agent: string | undefined;
  /** Where approvals of runs not started on this platform are posted; undefined: nowhere. */
  approvalsTarget: string | undefined;
  /** Platform user id → the agentplane role it decides as; empty: no approval is posted. */
  approvers: ReadonlyMap<string, Role>;
  tenant: string;
}

export interface SlackChatConfig extends ChatPlatformConfig {
  signingSecret: string;
}

export interface DiscordChatConfig extends ChatPlatformConfig {
  /** The application's Ed25519 public key, 64 hexadecimal digits. */
  publicKey: string;
}

/**
 * Telegram, pushed (`webhook`: updates arrive at POST /telegram/webhook, each carrying the
 * secret token) or `polling` (the gateway calls getUpdates; no public URL, no secret).
 */
export type TelegramChatConfig = ChatPlatformConfig &
  (
    | {
        mode: 'webhook';
        /** Expected in X-Telegram-Bot-Api-Secret-Token of every pushed update. */
        secretToken: string;
      }
    | { mode: 'polling' }
  );

/** The chat gateway's platforms; a platform is absent when its settings are not set. */
export interface ChatConfig {
  slack?: SlackChatConfig;
  discord?: DiscordChatConfig;
  telegram?: TelegramChatConfig;
}

type Env = Readonly<Record<string, string | undefined>>;

/** Every setting {@link loadChatConfig} reads. */
export const CHAT_CONFIG_VARIABLES: readonly string[] = Object.freeze(
  ['SLACK', 'DISCORD', 'TELEGRAM'].flatMap((p) =>
    ['BOT_TOKEN', 'API_URL', 'AGENT', 'APPROVERS', 'TENANT'].map((s) => `${p}_${s}`),
  ).concat(['SLACK_SIGNING_SECRET', 'SLACK_APPROVALS_CHANNEL', 'DISCORD_PUBLIC_KEY', 'DISCORD_APPROVALS_CHANNEL', 'TELEGRAM_MODE', 'TELEGRAM_SECRET_TOKEN', 'TELEGRAM_APPROVALS_CHAT']),
);

/**
 * Reads the chat gateway's settings from `env` (the API passes `process.env`). A platform is on
 * when its bot token is set, and then needs its inbound secret (SLACK_SIGNING_SECRET,
 * DISCORD_PUBLIC_KEY, TELEGRAM_SECRET_TOKEN; Telegram with TELEGRAM_MODE=polling has no inbound
 * requests, so no secret, and refuses one); any other setting of a platform without its token
 * is a partial configuration. Approvers are `<platform user id>:<role>` pairs, comma-separated,
 * role `user` or `admin` (a viewer may not decide). An approvals channel needs approvers. Throws
 * {@link ConfigError} naming the setting; the result is frozen. Empty variables count as unset.
 */
export function loadChatConfig(env: Env): ChatConfig {
  const get = (name: string): string | undefined => (env[name] === '' ? undefined : env[name]);
  const slack = platform(get, 'SLACK', 'https://slack.com/api', 'SLACK_SIGNING_SECRET', 'SLACK_APPROVALS_CHANNEL', /^[A-Z0-9]{2,}$/);
  const discord = platform(get, 'DISCORD', 'https://discord.com/api/v10', 'DISCORD_PUBLIC_KEY', 'DISCORD_APPROVALS_CHANNEL', /^\d{1,20}$/);
  const telegram = telegramConfig(get);
  if (discord && !/^[0-9a-fA-F]{64}$/.test(discord.secret!)) throw new ConfigError('DISCORD_PUBLIC_KEY', 'expected the 64 hexadecimal digits of the application public key');
  return Object.freeze({
    ...(slack ? { slack: Object.freeze({ ...slack.base, signingSecret: slack.secret! }) } : {}),
    ...(discord ? { discord: Object.freeze({ ...discord.base, publicKey: discord.secret! }) } : {}),
    ...(telegram ? { telegram: Object.freeze(telegram) } : {}),
  });
}

/** Telegram's settings: TELEGRAM_MODE `webhook` (the default) needs TELEGRAM_SECRET_TOKEN, `polling` refuses it. */
function telegramConfig(get: (name: string) => string | undefined): TelegramChatConfig | undefined {
  const mode = get('TELEGRAM_MODE') ?? 'webhook';
  if (mode !== 'webhook' && mode !== 'polling') throw new ConfigError('TELEGRAM_MODE', `expected webhook or polling, got "${mode}"`);
  const telegram = platform(get, 'TELEGRAM', 'https://api.telegram.org', 'TELEGRAM_SECRET_TOKEN', 'TELEGRAM_APPROVALS_CHAT', /^\d{1,20}$/, mode === 'webhook');
  if (!telegram) {
    if (get('TELEGRAM_MODE') !== undefined) throw new ConfigError('TELEGRAM_BOT_TOKEN', 'TELEGRAM_MODE is set but TELEGRAM_BOT_TOKEN is not: set both, or neither');
    return undefined;
  }
  if (telegram.base.approvalsTarget !== undefined && !/^-?\d{1,20}$/.test(telegram.base.approvalsTarget)) {
    throw new ConfigError('TELEGRAM_APPROVALS_CHAT', 'expected a Telegram chat id (an integer)');
  }
  if (mode === 'polling') {
    if (telegram.secret !== undefined) throw new ConfigError('TELEGRAM_SECRET_TOKEN', 'TELEGRAM_MODE is polling: nothing is pushed, so no secret token is checked; unset it, or use webhook mode');
    return { ...telegram.base, mode };
  }
  // Telegram accepts 1-256 characters A-Z, a-z, 0-9, _ and - as a webhook secret token.
  if (!/^[A-Za-z0-9_-]{1,256}$/.test(telegram.secret!)) throw new ConfigError('TELEGRAM_SECRET_TOKEN', 'expected 1 to 256 characters A-Z, a-z, 0-9, _ or -');
  return { ...telegram.base, mode, secretToken: telegram.secret! };
}

/** True when at least one platform is configured. */
export function chatEnabled(config: ChatConfig): boolean {
  return config.slack !== undefined || config.discord !== undefined || config.telegram !== undefined;
}

function platform(
  get: (name: string) => string | undefined,
  prefix: string,
  defaultApi: string,
  secretName: string,
  approvalsName: string,
  userId: RegExp,
  secretRequired = true,
): { base: ChatPlatformConfig; secret: string | undefined } | undefined {
  const token = get(`${prefix}_BOT_TOKEN`);
  const names = [secretName, approvalsName, ...['API_URL', 'AGENT', 'APPROVERS', 'TENANT'].map((s) => `${prefix}_${s}`)];
  if (token === undefined) {
    const stray = names.find((name) => get(name) !== undefined);
    if (stray) throw new ConfigError(`${prefix}_BOT_TOKEN`, `${stray} is set but ${prefix}_BOT_TOKEN is not: set both, or neither`);
    return undefined;
  }
  const secret = get(secretName);
  if (secret === undefined && secretRequired) throw new ConfigError(secretName, `${prefix}_BOT_TOKEN is set: the gateway verifies every request the platform sends with ${secretName}`);
  const apiUrl = get(`${prefix}_API_URL`) ?? defaultApi;
  if (!/^https?:\/\/[^\s/]+/.test(apiUrl)) throw new ConfigError(`${prefix}_API_URL`, `expected an http(s) URL, got "${apiUrl}"`);
  const agent = get(`${prefix}_AGENT`);
  if (agent !== undefined && !ID_PATTERN.test(agent)) throw new ConfigError(`${prefix}_AGENT`, `"${agent}" is not an agent or graph id`);
  const tenant = get(`${prefix}_TENANT`) ?? DEFAULT_TENANT;
  if (!ID_PATTERN.test(tenant)) throw new ConfigError(`${prefix}_TENANT`, `"${tenant}" is not a tenant id`);
  const approvers = parseApprovers(`${prefix}_APPROVERS`, get(`${prefix}_APPROVERS`) ?? '', userId);
  const approvalsTarget = get(approvalsName);
  if (approvalsTarget !== undefined && approvers.size === 0) {
    throw new ConfigError(`${prefix}_APPROVERS`, `${approvalsName} is set but nobody may decide: list the approvers as <user id>:<role>`);
  }
  return { base: { botToken: token, apiUrl: apiUrl.replace(/\/+$/, ''), agent, approvalsTarget, approvers, tenant }, secret };
}

function parseApprovers(name: string, raw: string, userId: RegExp): ReadonlyMap<string, Role> {
  const approvers = new Map<string, Role>();
  for (const entry of raw.split(',').map((part) => part.trim()).filter((part) => part !== '')) {
    const match = /^([^:\s]+):(user|admin|viewer)$/.exec(entry);
    if (!match || !userId.test(match[1]!)) throw new ConfigError(name, `expected <user id>:<role> (role user or admin), got "${entry}"`);
    if (match[2] === 'viewer') throw new ConfigError(name, `${match[1]} is a viewer, and a viewer may not decide approvals`);
    approvers.set(match[1]!, match[2] as Role);
  }
  return approvers;
}
