import { createServer, type Server } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
// Its afterAll kills the file's leftover redis-server children.
import '../support/redis.js';

/*
 * The cluster the tests start survives ports taken by other processes between the moment they
 * are found free and the moment a node binds them: a test file running beside it may take a
 * node's port or its cluster bus port (port + 10000), and CI failed once on that. freePort()
 * is steered here to hand out such ports first.
 */
const queue = vi.hoisted(() => ({ ports: [] as number[] }));
vi.mock('../../scripts/dev/redis-server.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../scripts/dev/redis-server.js')>();
  return { ...original, freePort: async () => queue.ports.shift() ?? original.freePort() };
});
const { freePort } = await import('../../scripts/dev/redis-server.js');
const { startRedisCluster } = await import('../../scripts/dev/redis-cluster.js');

const held: Server[] = [];
afterEach(async () => {
  queue.ports.length = 0;
  await Promise.all(held.splice(0).map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
});

/** Listens on loopback `port` until the test ends, as another process would. */
async function hold(port: number): Promise<void> {
  // Connections made to it (a node's PING on a taken port) are ended at once, so close() returns.
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  held.push(server);
}

/** A free port whose bus port (+10000) is below 65536 and free too. */
async function freePair(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 10_000 >= 65_536) continue;
    const probe = createServer();
    const free = await new Promise<boolean>((resolve) => {
      probe.once('error', () => resolve(false));
      probe.listen(port + 10_000, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

async function clusterState(nodes: string): Promise<string> {
  const [host, port] = nodes.split(',')[0]!.split(':');
  const client = new Redis({ host, port: Number(port), lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    return String(await client.cluster('INFO'));
  } finally {
    client.disconnect();
  }
}

describe('startRedisCluster', () => {
  it.each([
    ['does not put a node on a port whose cluster bus port another process holds', 10_000],
    ['starts a node again on other ports when its port was taken after it was found free', 0],
  ])('%s', async (_name, offset) => {
    const port = await freePair();
    await hold(port + offset);
    queue.ports.push(port);
    const cluster = await startRedisCluster({ replicas: 0 });
    try {
      const ports = cluster.servers.map((s) => s.port);
      expect(ports).toHaveLength(3);
      expect(ports).not.toContain(port);
      expect(await clusterState(cluster.nodes)).toMatch(/cluster_state:ok/);
    } finally {
      await cluster.stop();
    }
  });
});
