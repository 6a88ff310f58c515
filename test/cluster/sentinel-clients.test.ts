import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest';
import { openRedis, type RedisClient } from '../../src/adapters/redis/connection.js';
import type { RedisConnection } from '../../src/config-redis.js';
import { startRedisSentinel, type TestRedisSentinel } from '../support/redis-cluster.js';
import { waitFor } from '../support/wait.js';

/**
 * Clients of the connection factory in Sentinel mode across failovers, without the processes
 * around them: every client writes to the new master afterwards, however the old one went
 * (killed, or demoted alive by a manual failover), and none gives up reconnecting.
 */
let sentinel: TestRedisSentinel;
const sentinelPorts = () => sentinel.sentinels.split(',').map((s) => Number(s.split(':')[1]));

beforeAll(async () => {
  sentinel = await startRedisSentinel({ replicas: 2 });
}, 60_000);
afterAll(async () => {
  await sentinel?.stop();
});

function connection(ports: number[]): RedisConnection {
  return {
    mode: 'sentinel',
    sentinels: ports.map((port) => ({ host: '127.0.0.1', port })),
    name: sentinel.name,
    auth: { password: sentinel.password },
    sentinelPassword: sentinel.sentinelPassword,
  };
}

/** `count` clients like BullMQ's (retrying forever), ready, disconnected when the test ends. */
async function openClients(ports: number[], count: number): Promise<{ clients: RedisClient[]; ended: () => number }> {
  let ended = 0;
  const clients = Array.from({ length: count }, (_, i) => {
    const client = openRedis(connection(ports), { name: `sentinel-test-${i}`, maxRetriesPerRequest: null });
    client.on('end', () => (ended += 1));
    return client;
  });
  // Counted before the test's own disconnect ends them.
  onTestFinished(() => clients.forEach((c) => c.disconnect()));
  await waitFor('every client to be ready', () => clients.every((c) => c.status === 'ready'), 30_000);
  return { clients, ended: () => ended };
}

/** Resolves once every client's write lands on the master the Sentinels name (`port`). */
async function allWriteTo(clients: RedisClient[], port: number, key: string): Promise<void> {
  await waitFor(
    `every client to write to the master on ${port}`,
    async () => {
      const written = await Promise.all(clients.map((c, i) => c.set(`${key}:${i}`, String(port)).then(() => true, () => false)));
      if (!written.every(Boolean)) return false;
      const master = new Redis({ port, host: '127.0.0.1', password: sentinel.password, maxRetriesPerRequest: 1 });
      try {
        const values = await master.mget(clients.map((_, i) => `${key}:${i}`));
        return values.every((v) => v === String(port));
      } finally {
        master.disconnect();
      }
    },
    30_000,
    100,
  );
}

it('follows a manual failover, the old master alive: every client writes to the new master, none to the old one', async () => {
  const { clients, ended } = await openClients(sentinelPorts(), 10);
  const before = await sentinel.masterPort();
  // Until the clients are checked, the old master refuses the Sentinels' REPLICAOF (and with it
  // the CLIENT KILL of the same transaction): it stays a master with every client connected, so
  // a client that did not follow +switch-master keeps writing to it however long the check
  // takes on a busy machine, and the check fails. No race with the Sentinels' demotion.
  const old = new Redis({ port: before, host: '127.0.0.1', password: sentinel.password, maxRetriesPerRequest: 1 });
  old.on('error', () => {});
  onTestFinished(() => old.disconnect());
  await old.call('ACL', 'SETUSER', 'default', '-replicaof', '-slaveof');
  const admin = new Redis({ port: sentinelPorts()[0]!, host: '127.0.0.1', password: sentinel.sentinelPassword, maxRetriesPerRequest: 1 });
  onTestFinished(() => admin.disconnect());
  await admin.call('SENTINEL', 'FAILOVER', sentinel.name);
  const after = await waitFor('the sentinels to name another master', async () => {
    const now = await sentinel.masterPort();
    return now !== before && now;
  }, 30_000, 100);
  await allWriteTo(clients, after, 'manual');
  expect(await old.info('replication')).toMatch(/^role:master\r?$/m);
  expect(ended()).toBe(0);
  // Then the Sentinels demote it: it replicates the new master, as the next test expects.
  await old.call('ACL', 'SETUSER', 'default', '+replicaof', '+slaveof');
  await waitFor('the old master to replicate the new one', async () => {
    const info = await old.info('replication');
    return /^role:slave\r?$/m.test(info) && new RegExp(`^master_port:${after}\\r?$`, 'm').test(info) && /^master_link_status:up\r?$/m.test(info);
  }, 60_000, 200);
}, 120_000);

it('none gives up when Sentinels announce the new master while the clients, their master dead, are asking where it is', async () => {
  // The Sentinels' answers to the clients looking up the master are held back until the
  // promotion is announced (+switch-master) to every subscribed connection: ioredis's failover
  // detector then ended every such client for good ("Connection is closed").
  const proxies = await Promise.all(sentinelPorts().map((port) => sentinelProxy(port)));
  onTestFinished(() => proxies.forEach((p) => p.close()));
  const { clients, ended } = await openClients(proxies.map((p) => p.port), 10);
  proxies.forEach((p) => p.hold());
  const { killed, promoted } = await sentinel.failover();
  expect(promoted).not.toBe(killed);
  await waitFor('every subscribed connection to hear of the promotion', () => proxies.every((p) => p.subscribers().every((s) => s.switched)), 20_000);
  proxies.forEach((p) => p.release());
  await allWriteTo(clients, promoted, 'killed').catch((error: Error) => {
    throw new Error(`${error.message}; ${ended()} of the clients stopped reconnecting (status "end")`);
  });
  expect(ended()).toBe(0);
}, 90_000);

interface SentinelProxy {
  port: number;
  /** Hold back what the Sentinel sends on connections that have not subscribed (master look-ups). */
  hold(): void;
  /** Send what was held, and everything from now on. */
  release(): void;
  /** The connections that subscribed, and whether a +switch-master message reached each. */
  subscribers(): { switched: boolean }[];
  close(): void;
}

/** A TCP proxy to the Sentinel on `port` that can hold back its answers to look-ups (see {@link SentinelProxy}). */
async function sentinelProxy(port: number): Promise<SentinelProxy> {
  const sockets = new Set<Socket>();
  const links: { subscriber: boolean; switched: boolean; held: Buffer[]; flush(): void }[] = [];
  let holding = false;
  const server: Server = createServer((socket) => {
    const upstream = createConnection({ port, host: '127.0.0.1' });
    for (const s of [socket, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        socket.destroy();
        upstream.destroy();
      });
    }
    const link = {
      subscriber: false,
      switched: false,
      held: [] as Buffer[],
      flush: () => {
        for (const chunk of link.held.splice(0)) if (socket.writable) socket.write(chunk);
      },
    };
    links.push(link);
    socket.on('close', () => links.splice(links.indexOf(link), 1));
    socket.on('data', (chunk: Buffer) => {
      if (/subscribe/i.test(chunk.toString('latin1'))) link.subscriber = true;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (link.subscriber) {
        if (/\$7\r\nmessage\r\n\$14\r\n\+switch-master\r\n/.test(chunk.toString('latin1'))) link.switched = true;
        socket.write(chunk);
      } else if (holding) link.held.push(chunk);
      else socket.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    hold: () => (holding = true),
    release: () => {
      holding = false;
      links.forEach((link) => link.flush());
    },
    subscribers: () => links.filter((link) => link.subscriber),
    close: () => {
      server.close();
      sockets.forEach((s) => s.destroy());
    },
  };
}
