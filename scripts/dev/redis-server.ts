import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/*
 * Private redis-server processes on loopback, for the tests (test/support/redis.ts) and the
 * benchmarks (bench/harness/redis.ts) alike: started on a free port, stopped, killed, paused and
 * restarted, with a password or TLS when asked. Nothing here knows a test runner.
 */

/** A redis-server child process of a test or a benchmark, which can stop and restart it. */
export interface PrivateRedis {
  /** `redis://127.0.0.1:<port>` (`rediss://` with TLS, with the password when there is one). */
  url: string;
  port: number;
  /** Stops the server (SIGKILL) and removes its files. */
  stop(): Promise<void>;
  /** Kills the server (SIGKILL); data is lost, as with a crashed in-memory Redis. */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  restart(): Promise<void>;
  /** SIGSTOP: the server keeps its connections but answers nothing, as a stalled Redis does. */
  pause(): void;
  /** SIGCONT after {@link pause}. */
  resume(): void;
  /** True between a start and a kill. */
  running(): boolean;
  /** The server's process id while it runs (benchmarks count its CPU). */
  pid(): number | undefined;
}

/** What to do when there is no redis-server: the tests' ways of getting a Redis. */
export const HOW_TO_GET_ONE =
  'No Redis for the tests: set REDIS_URL, or install redis-server (apt-get install -y redis-server), ' +
  'or run a Docker engine for testcontainers.';

/** A free loopback TCP port (free when asked: another process may take it before it is bound). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** True when nothing listens on loopback `port` now (another process may take it right after). */
export async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** True when a `redis-server` binary is on PATH. */
export function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** How {@link startPrivateRedis} starts its server. */
export interface PrivateRedisOptions {
  /**
   * Keep data across kill/restart in an append-only file fsynced on every write, as a
   * production Redis would, so "no acknowledged write lost" can be checked. @defaultValue false
   */
  persist?: boolean;
  /** Listen port. @defaultValue a free loopback port */
  port?: number;
  /** Config file given first (a sentinel needs one it can rewrite). */
  configFile?: string;
  /** More arguments after the defaults (cluster or replication settings, `--sentinel`). */
  args?: string[];
  /** `requirepass`: the server wants it, PING is sent after AUTH, and the URL carries it. */
  password?: string;
  /**
   * TLS only (`--port 0 --tls-port <port>`), with this certificate; PING goes over TLS and the
   * URL is `rediss://`. Clients are not asked for certificates.
   */
  tls?: TlsFiles;
}

/** A CA and a server certificate for 127.0.0.1 signed by it, as files (see {@link makeCertificates}). */
export interface TlsFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
  /** The CA certificate (PEM). */
  ca: string;
}

/** Makes a throwaway CA and a certificate for 127.0.0.1 in `dir` with openssl. */
export function makeCertificates(dir: string): TlsFiles {
  const files = { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'server.crt'), keyFile: join(dir, 'server.key') };
  const openssl = (...args: string[]) => {
    const result = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${result.stderr}`);
  };
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=agentplane-test-ca', '-keyout', 'ca.key', '-out', 'ca.crt');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', 'server.key', '-out', 'server.csr');
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '1', '-copy_extensions', 'copy', '-out', 'server.crt');
  return { ...files, ca: readFileSync(files.caFile, 'utf8') };
}

/** The server arguments of TLS only on `port`. */
export function tlsArgs(tls: TlsFiles, port: number): string[] {
  return ['--port', '0', '--tls-port', String(port), '--tls-cert-file', tls.certFile, '--tls-key-file', tls.keyFile, '--tls-ca-cert-file', tls.caFile, '--tls-auth-clients', 'no'];
}

/**
 * Every redis-server child still running. A test file stops its servers when it ends, yet a
 * hook that failed or timed out would leave them running for good: they are killed at the end
 * of the test file (pass or fail: test/support/redis.ts), and when this process exits at the latest.
 */
const servers = new Set<ChildProcess>();
process.once('exit', () => {
  for (const server of servers) server.kill('SIGKILL');
});

/** Kills (SIGKILL) every redis-server child started by {@link startPrivateRedis} that is still running. */
export async function killPrivateServers(): Promise<void> {
  await Promise.all(
    [...servers].map(
      (server) =>
        new Promise<void>((resolve) => {
          server.once('exit', () => resolve());
          server.kill('SIGCONT');
          server.kill('SIGKILL');
        }),
    ),
  );
}

/**
 * Starts a private redis-server child on a free port (fault tests stop and restart it). A
 * free port taken by another test file's server before ours bound it makes ours exit: it is
 * started again on another one.
 */
export async function startPrivateRedis(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startPrivateRedisOnce(options);
    } catch (error) {
      if (!(error instanceof PortTakenError) || options.port !== undefined || attempt === 3) throw error;
    }
  }
}

/** The server exited before it answered: its port was taken between freePort() and its bind. */
export class PortTakenError extends Error {}

async function startPrivateRedisOnce(options: PrivateRedisOptions): Promise<PrivateRedis> {
  if (!hasRedisServer()) throw new Error(HOW_TO_GET_ONE);
  const port = options.port ?? (await freePort());
  const dir = options.persist ? mkdtempSync(join(tmpdir(), 'agentplane-redis-')) : undefined;
  const persistence = dir ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir] : ['--appendonly', 'no'];
  let child: ChildProcess | undefined;

  const start = async (): Promise<void> => {
    const auth = options.password === undefined ? [] : ['--requirepass', options.password];
    const first = options.configFile ? [options.configFile] : [];
    const listen = options.tls ? tlsArgs(options.tls, port) : ['--port', String(port)];
    const started = spawn('redis-server', [...first, ...listen, '--bind', '127.0.0.1', '--save', '', ...persistence, ...auth, ...(options.args ?? [])], {
      stdio: 'ignore',
    });
    child = started;
    servers.add(started);
    started.once('exit', () => servers.delete(started));
    try {
      await waitForPing(port, options.password, options.tls, started);
    } catch (error) {
      await kill();
      throw error;
    }
  };
  const kill = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill('SIGKILL');
    });
  };

  try {
    await start();
  } catch (error) {
    if (dir) rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const stop = async (): Promise<void> => {
    await kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
  const signal = (name: NodeJS.Signals) => {
    if (child && child.exitCode === null) child.kill(name);
  };
  return {
    url: `${options.tls ? 'rediss' : 'redis'}://${options.password === undefined ? '' : `:${encodeURIComponent(options.password)}@`}127.0.0.1:${port}`,
    port,
    kill,
    restart: start,
    stop: async () => {
      signal('SIGCONT');
      await stop();
    },
    pause: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
    running: () => child !== undefined && child.exitCode === null,
    pid: () => child?.pid,
  };
}

async function waitForPing(port: number, password: string | undefined, tls: TlsFiles | undefined, child: ChildProcess): Promise<void> {
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const taken = () => new PortTakenError(`redis-server on port ${port} exited at start (port taken?)`);
  // Whatever else took the port may accept a connection and never answer a PING: the child's
  // exit ends the wait then.
  const exit = new Promise<never>((_, reject) => {
    if (exited()) reject(taken());
    else child.once('exit', () => reject(taken()));
  });
  exit.catch(() => {});
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (exited()) throw taken();
    const client = new Redis({ port, host: '127.0.0.1', password, ...(tls ? { tls: { ca: tls.ca } } : {}), lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      await Promise.race([client.connect().then(() => client.ping()), exit]);
      // A PING answered while our child has exited came from another file's server on the port.
      if (exited()) throw taken();
      return;
    } catch (error) {
      if (error instanceof PortTakenError) throw error;
      if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer PING`, { cause: error });
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      client.disconnect();
    }
  }
}
