import { Command, Option } from 'commander';
import { DEFAULT_TENANT, ID_PATTERN, ROLE_RANK } from '../../domain/types.js';
import { usage } from '../request.js';

/** What the API asks of an HS256 secret (RFC 7518 §3.2), so a token it would refuse is not minted. */
const MIN_SECRET_BYTES = 32;

interface TokenOptions {
  secret?: string;
  role: string;
  tenant: string;
  sub: string;
  expiresIn: string;
  issuer?: string;
  audience?: string;
  tenantClaim: string;
  json?: boolean;
}

/**
 * `agentplane token`: a development HS256 JWT signed with SERVICE_JWT_SECRET, with the claims
 * the API reads (`sub`, `roles`, the tenant claim, `exp`, and `iss`/`aud` when the API checks
 * them): `export AGENTPLANE_TOKEN=$(agentplane token --role user)`. jose is loaded by the
 * command alone, to keep the start of the other commands short.
 */
export function tokenCommand(): Command {
  return new Command('token')
    .description('mint a development HS256 token signed with SERVICE_JWT_SECRET')
    .addOption(new Option('--secret <secret>', 'the shared secret of the API').env('SERVICE_JWT_SECRET'))
    .addOption(new Option('--role <role>', 'role claim').choices(Object.keys(ROLE_RANK)).default('user'))
    .option('--tenant <tenant>', 'tenant claim', DEFAULT_TENANT)
    .option('--sub <subject>', 'subject: who the API records as the caller', 'dev')
    .option('--expires-in <span>', 'lifetime: seconds or a span such as 30m, 12h, 7d', '1h')
    .addOption(new Option('--issuer <iss>', 'iss claim (the API checks it when set)').env('SERVICE_JWT_ISSUER'))
    .addOption(new Option('--audience <aud>', 'aud claim (the API checks it when set)').env('SERVICE_JWT_AUDIENCE'))
    .addOption(new Option('--tenant-claim <name>', 'claim that carries the tenant').env('SERVICE_JWT_TENANT_CLAIM').default('tenant_id'))
    .action(async (_options, command: Command) => {
      const options = command.optsWithGlobals<TokenOptions>();
      const { decodeJwt, SignJWT } = await import('jose');
      const token = await mint(SignJWT, options);
      if (options.json) process.stdout.write(`${JSON.stringify({ token, claims: decodeJwt(token) })}\n`);
      else process.stdout.write(`${token}\n`);
    });
}

async function mint(SignJWT: typeof import('jose').SignJWT, options: TokenOptions): Promise<string> {
  if (!options.secret) throw usage('token needs the secret: set SERVICE_JWT_SECRET or pass --secret.');
  const secret = new TextEncoder().encode(options.secret);
  if (secret.byteLength < MIN_SECRET_BYTES) throw usage(`the secret must be at least ${MIN_SECRET_BYTES} bytes for HS256.`);
  if (!ID_PATTERN.test(options.tenant)) throw usage(`--tenant must match ${ID_PATTERN}.`);
  if (options.sub === '') throw usage('--sub must not be empty.');
  const expiresIn = /^\d+$/.test(options.expiresIn) ? Number(options.expiresIn) + Math.floor(Date.now() / 1000) : options.expiresIn;
  const jwt = new SignJWT({ roles: [options.role], [options.tenantClaim]: options.tenant })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(options.sub)
    .setIssuedAt();
  if (options.issuer) jwt.setIssuer(options.issuer);
  if (options.audience) jwt.setAudience(options.audience);
  try {
    jwt.setExpirationTime(expiresIn);
  } catch (error) {
    throw usage(`--expires-in: ${(error as Error).message}; use seconds or a span such as 30m, 12h, 7d.`);
  }
  return jwt.sign(secret);
}

