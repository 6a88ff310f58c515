import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openRedis, type RedisClient } from '../../src/adapters/redis/connection.js';
import { usePrivateRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/**
 * A connection's commands of one turn of the event loop leave in one write (connection.ts,
 * coalesceWrites): Redis then reads them with one read. A private server, so that its read
 * counter (INFO stats, total_reads_processed) counts this test's reads alone.
 */
describe('commands sent in one turn of the event loop', () => {
  const server = usePrivateRedis();
  const clients: RedisClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.quit().catch(() => undefined)));
  });

  const open = (name: string) => {
    const client = openRedis({ mode: 'single', url: server.url }, { name, maxRetriesPerRequest: 1 });
    clients.push(client);
    return client;
  };
  /**
   * The admin and the commands connection, both ready, and no other client left: a closing
   * connection's last read (its end) would otherwise count in the measured window.
   */
  const ready = async () => {
    const admin = open('admin');
    const client = open('commands');
    await Promise.all([admin.ping(), client.ping()]);
    await waitFor('the earlier clients gone', async () => (String(await admin.client('LIST')).trim().split('\n').length === 2 ? true : undefined));
    return { admin, client };
  };
  /** The server's reads so far (the INFO asking is one of them). */
  const reads = async (admin: RedisClient) => Number(/total_reads_processed:(\d+)/.exec(String(await admin.info('stats')))![1]);

  it('reach Redis in one read, answered in order', async () => {
    const { admin, client } = await ready();
    const before = await reads(admin);
    const replies = await Promise.all(Array.from({ length: 20 }, () => client.incr('counter')));
    const after = await reads(admin);
    expect(replies).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    // The batch's read and the second INFO's: not one read per command.
    expect(after - before).toBeLessThanOrEqual(2);
  });

  it('of several callbacks of one turn share the write, and the next turn writes again', async () => {
    const { admin, client } = await ready();
    const before = await reads(admin);
    // Two timers due together run in one timers phase, before the uncork of the check phase.
    const sent = await new Promise<Promise<string | null>[]>((resolve) => {
      const all: Promise<string | null>[] = [];
      setTimeout(() => all.push(client.set('a', '1').then(() => client.get('a'))), 0);
      setTimeout(() => {
        all.push(client.set('b', '2').then(() => client.get('b')));
        resolve(all);
      }, 0);
    });
    expect(await Promise.all(sent)).toEqual(['1', '2']);
    const after = await reads(admin);
    // The two SETs in one read, the two GETs (sent on their replies, one turn later) in another, the INFO.
    expect(after - before).toBeLessThanOrEqual(3);
  });

  it('are not held behind a command in flight (as ioredis auto-pipelining holds them)', async () => {
    // A proxy between the client and Redis records what the client sends.
    let sent = '';
    const sockets: Socket[] = [];
    const proxy: Server = createServer((client) => {
      const upstream = createConnection(server.port, '127.0.0.1');
      sockets.push(client, upstream);
      client.on('data', (data) => {
        sent += data.toString('latin1');
        upstream.write(data);
      });
      upstream.on('data', (data) => client.write(data));
      client.on('error', () => undefined);
      upstream.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = proxy.address() as { port: number };
      const admin = open('admin');
      const proxied = openRedis({ mode: 'single', url: `redis://127.0.0.1:${port}` }, { name: 'proxied', maxRetriesPerRequest: 1 });
      clients.push(proxied);
      await proxied.ping();
      // In flight until the test answers it, which it does only once the GET has left.
      const blocked = proxied.blpop('in-flight', 0);
      await new Promise((resolve) => setImmediate(resolve));
      const read = proxied.get('behind');
      await waitFor('the GET sent while the BLPOP is in flight', () => sent.includes('behind'));
      await admin.rpush('in-flight', 'done');
      expect(await blocked).toEqual(['in-flight', 'done']);
      expect(await read).toBeNull();
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});
