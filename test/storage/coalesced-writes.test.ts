import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openRedis, type RedisClient } from '../../src/adapters/redis/connection.js';
import { usePrivateRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

/**
 * A connection's commands sent together leave in one write (connection.ts, coalesceWrites):
 * Redis then reads them with one read. A private server, so that its read
 * counter (INFO stats, total_reads_processed) counts this test's reads alone.
 */
describe('commands sent together', () => {
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

  it('written in promise continuations run one after another share the write', async () => {
    const { admin, client } = await ready();
    const before = await reads(admin);
    // As a step's code writes: a command, an await of something already settled, another.
    const written = await Promise.resolve().then(async () => {
      const first = client.set('a', '1');
      await Promise.resolve();
      const second = client.set('b', '2');
      await Promise.resolve();
      return Promise.all([first, second, client.get('a')]);
    });
    const after = await reads(admin);
    expect(written).toEqual(['OK', 'OK', '1']);
    // The three commands' read and the second INFO's.
    expect(after - before).toBeLessThanOrEqual(2);
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
