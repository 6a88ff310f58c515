import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_SESSION_METADATA_BYTES } from '../../src/domain/session-metadata.js';
import type { JsonObject } from '../../src/domain/types.js';
import type { Store } from '../../src/ports/store.js';
import { manualClock } from './retention.contract.js';

/** A fresh Store stamping writes with `clock`. */
export type SessionCreationStoreFactory = (options: { clock: () => number }) => Promise<Store>;

const T = 'tenant-a';
// On the test Redis Cluster, T and OTHER land on different masters (test/cluster checks it).
const OTHER = 'tenant-c';
const ALL = { limit: 10_000, offset: 0 };
const HOUR = 3_600_000;

/** Metadata whose JSON takes exactly `bytes` UTF-8 bytes, two of them per 'é'. */
function metadataOf(bytes: number, extra: JsonObject = {}): JsonObject {
  const base = JSON.stringify({ ...extra, big: '' });
  const fill = bytes - new TextEncoder().encode(base).length;
  const metadata = { ...extra, big: 'é'.repeat(Math.floor(fill / 2)) + 'x'.repeat(fill % 2) };
  expect(new TextEncoder().encode(JSON.stringify(metadata)).length).toBe(bytes);
  return metadata;
}

/**
 * Sessions that exist before their first run (LangGraph threads), run against both adapters:
 * creating one with metadata, patching the metadata, the bound on its size, the first run
 * binding it to its agent, and its place in the lists and in expiry.
 */
export function sessionCreationContract(name: string, make: SessionCreationStoreFactory): void {
  describe(`Sessions before their first run: ${name}`, () => {
    const setUp = async () => {
      const clock = manualClock();
      const store = await make({ clock: clock.now });
      return { store, clock };
    };

    it('creates a session bound to no agent, with no checkpoint and no run, listed and read with its metadata', async () => {
      const { store, clock } = await setUp();
      const earlier = await store.runs.createRun(T, { run_id: randomUUID(), session_id: randomUUID(), agent_id: 'echo' });
      clock.advance(1_000);
      const id = randomUUID();
      const metadata = { owner: 'ana', 'a/b "c"': 'ключ 😀', nested: { list: [], n: 9007199254740991, none: null }, empty: {}, off: false };
      const created = await store.sessions.createSession(T, { session_id: id, metadata });
      const at = new Date(clock.now()).toISOString();
      expect(created).toEqual({ id, agent_id: '', tenant_id: T, created_at: at, updated_at: at, metadata });
      expect(await store.sessions.getSession(T, id)).toEqual(created);
      expect(await store.sessions.listSessions(T, ALL)).toEqual([created, await store.sessions.getSession(T, earlier.session_id)]);
      expect((await store.sessions.listSessions(T, ALL))[1]!.metadata).toEqual({});
      expect(await store.sessions.listSessions(T, { ...ALL, agent_id: 'echo' })).toHaveLength(1);
      expect(await store.sessions.getCheckpoint(T, id)).toBeNull();
      expect(await store.runs.listRuns(T, id, ALL)).toEqual([]);
      expect(await store.runs.latestRun(T, id)).toBeNull();
      expect(await store.sessions.getSession(OTHER, id)).toBeNull();
      expect(await store.sessions.listSessions(OTHER, ALL)).toEqual([]);
      const bare = await store.sessions.createSession(T, { session_id: randomUUID() });
      expect(bare.metadata).toEqual({});
    });

    it('refuses to create a session that exists, changing nothing; one of two concurrent creations wins', async () => {
      const { store } = await setUp();
      const id = randomUUID();
      const first = await store.sessions.createSession(T, { session_id: id, metadata: { v: 1 } });
      await expect(store.sessions.createSession(T, { session_id: id, metadata: { v: 2 } })).rejects.toMatchObject({ code: 'conflict' });
      expect(await store.sessions.getSession(T, id)).toEqual(first);
      const ran = await store.runs.createRun(T, { run_id: randomUUID(), session_id: randomUUID(), agent_id: 'echo' });
      await expect(store.sessions.createSession(T, { session_id: ran.session_id })).rejects.toMatchObject({ code: 'conflict' });
      expect((await store.sessions.getSession(T, ran.session_id))!.agent_id).toBe('echo');
      // The same id in another tenant is another session.
      expect((await store.sessions.createSession(OTHER, { session_id: id })).tenant_id).toBe(OTHER);

      const raced = randomUUID();
      const results = await Promise.allSettled([0, 1].map((v) => store.sessions.createSession(T, { session_id: raced, metadata: { v } })));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: { code: 'conflict' } });
      expect((await store.sessions.listSessions(T, ALL)).filter((s) => s.id === raced)).toHaveLength(1);
    });

    it('patches metadata as a shallow merge where null removes a key, and counts the patch as a write', async () => {
      const { store, clock } = await setUp();
      const id = randomUUID();
      await store.sessions.createSession(T, { session_id: id, metadata: { keep: 1, drop: 'x', nested: { a: 1, b: 2 } } });
      clock.advance(5_000);
      const patched = await store.sessions.updateSessionMetadata(T, id, { drop: null, nested: { b: 3 }, added: [1, { c: [] }], absent: null });
      expect(patched.metadata).toEqual({ keep: 1, nested: { b: 3 }, added: [1, { c: [] }] });
      expect(patched.updated_at).toBe(new Date(clock.now()).toISOString());
      expect(patched.created_at).not.toBe(patched.updated_at);
      expect(await store.sessions.getSession(T, id)).toEqual(patched);
      expect((await store.sessions.listSessions(T, ALL))[0]).toEqual(patched);
      const emptied = await store.sessions.updateSessionMetadata(T, id, { keep: null, nested: null, added: null });
      expect(emptied.metadata).toEqual({});
      expect((await store.sessions.listSessions(T, ALL))[0]!.metadata).toEqual({});
      expect((await store.sessions.updateSessionMetadata(T, id, {})).metadata).toEqual({});

      // A session its first run created takes metadata as well.
      const ran = await store.runs.createRun(T, { run_id: randomUUID(), session_id: randomUUID(), agent_id: 'echo' });
      expect((await store.sessions.updateSessionMetadata(T, ran.session_id, { tag: 'x' })).metadata).toEqual({ tag: 'x' });
      await expect(store.sessions.updateSessionMetadata(T, 'nope', { a: 1 })).rejects.toMatchObject({ code: 'not_found' });
      await expect(store.sessions.updateSessionMetadata(OTHER, id, { a: 1 })).rejects.toMatchObject({ code: 'not_found' });
      expect(await store.sessions.getSession(OTHER, id)).toBeNull();
    });

    it('bounds metadata at MAX_SESSION_METADATA_BYTES of JSON (UTF-8): past it, payload_too_large and nothing written', async () => {
      const { store } = await setUp();
      const full = randomUUID();
      expect((await store.sessions.createSession(T, { session_id: full, metadata: metadataOf(MAX_SESSION_METADATA_BYTES) })).metadata).toEqual(
        metadataOf(MAX_SESSION_METADATA_BYTES),
      );
      const refused = randomUUID();
      await expect(store.sessions.createSession(T, { session_id: refused, metadata: metadataOf(MAX_SESSION_METADATA_BYTES + 1) })).rejects.toMatchObject({
        code: 'payload_too_large',
      });
      expect(await store.sessions.getSession(T, refused)).toBeNull();
      expect((await store.sessions.listSessions(T, ALL)).map((s) => s.id)).toEqual([full]);

      // A patch is bounded by the merged metadata: replacing or removing keys makes room.
      const id = randomUUID();
      await store.sessions.createSession(T, { session_id: id, metadata: { a: 'x'.repeat(100) } });
      const before = await store.sessions.getSession(T, id);
      await expect(store.sessions.updateSessionMetadata(T, id, metadataOf(MAX_SESSION_METADATA_BYTES - 8))).rejects.toMatchObject({ code: 'payload_too_large' });
      expect(await store.sessions.getSession(T, id)).toEqual(before);
      const exact = metadataOf(MAX_SESSION_METADATA_BYTES, { a: 'y' });
      expect((await store.sessions.updateSessionMetadata(T, id, exact)).metadata).toEqual(exact);
      await expect(store.sessions.updateSessionMetadata(T, id, { b: 1 })).rejects.toMatchObject({ code: 'payload_too_large' });
      expect((await store.sessions.updateSessionMetadata(T, id, { a: null, b: 1 })).metadata).toEqual({ big: exact.big, b: 1 });

      // A value JSON cannot hold is refused before anything is written.
      await expect(store.sessions.createSession(T, { session_id: refused, metadata: { n: 1n } })).rejects.toMatchObject({ code: 'bad_request' });
      expect(await store.sessions.getSession(T, refused)).toBeNull();
    });

    it("binds a session created before any run to its first run's agent, which starts as on a new session", async () => {
      const { store, clock } = await setUp();
      const thread = randomUUID();
      await store.sessions.createSession(T, { session_id: thread, metadata: { graph_id: 'agent' } });
      clock.advance(1_000);
      const newer = await store.runs.createRun(T, { run_id: randomUUID(), session_id: randomUUID(), agent_id: 'echo' });
      clock.advance(1_000);
      const run = await store.runs.createRun(T, { run_id: randomUUID(), session_id: thread, agent_id: 'echo', start: { node_id: 'receive', input: { q: 1 } }, metadata: { ignored: true } });
      expect(run).toMatchObject({ session_id: thread, agent_id: 'echo', status: 'queued' });
      expect(run.behind).toBeUndefined();
      const session = (await store.sessions.getSession(T, thread))!;
      expect(session).toMatchObject({ agent_id: 'echo', metadata: { graph_id: 'agent' } });
      // Its agent's list has it at its created_at, behind the newer session.
      expect((await store.sessions.listSessions(T, { ...ALL, agent_id: 'echo' })).map((s) => s.id)).toEqual([newer.session_id, thread]);
      expect((await store.sessions.listSessions(T, ALL)).map((s) => s.id)).toEqual([newer.session_id, thread]);
      expect(await store.sessions.getCheckpoint(T, thread)).toMatchObject({ seq_num: 1, node_id: 'receive', state: { q: 1 } });
      expect(await store.runs.latestRun(T, thread)).toMatchObject({ id: run.id, status: 'queued' });
      expect((await store.runs.findRuns(T, { ...ALL, agent_id: 'echo' })).map((r) => r.id)).toContain(run.id);

      // Bound now: another agent is refused, on its own or queued behind.
      for (const behind of [false, true]) {
        await expect(store.runs.createRun(T, { run_id: randomUUID(), session_id: thread, agent_id: 'human-review', behind })).rejects.toMatchObject({
          code: 'conflict',
          message: expect.stringContaining('"echo"'),
        });
      }
      await store.runs.updateRun(T, run.id, { status: 'completed' });
      await store.sessions.deleteSession(T, thread);
      expect(await store.sessions.listSessions(T, { ...ALL, agent_id: 'echo' })).toEqual([await store.sessions.getSession(T, newer.session_id)]);
    });

    it("takes a new session's metadata from the run that creates it, within the same bound", async () => {
      const { store } = await setUp();
      const run = await store.runs.createRun(T, { run_id: randomUUID(), session_id: randomUUID(), agent_id: 'echo', start: { node_id: 'receive', input: {} }, metadata: { from: 'run', n: null } });
      expect((await store.sessions.getSession(T, run.session_id))!.metadata).toEqual({ from: 'run', n: null });
      const refused = { run_id: randomUUID(), session_id: randomUUID(), agent_id: 'echo', start: { node_id: 'receive', input: { a: 1 } } };
      await expect(store.runs.createRun(T, { ...refused, metadata: metadataOf(MAX_SESSION_METADATA_BYTES + 1) })).rejects.toMatchObject({ code: 'payload_too_large' });
      expect(await store.sessions.getSession(T, refused.session_id)).toBeNull();
      expect(await store.runs.getRun(T, refused.run_id)).toBeNull();
      expect(await store.sessions.listSessions(T, ALL)).toHaveLength(1);
    });

    it('expires a session created before any run once idle, counting a metadata patch as activity; deletes one', async () => {
      const { store, clock } = await setUp();
      const idle = await store.sessions.createSession(T, { session_id: randomUUID() });
      const patched = await store.sessions.createSession(T, { session_id: randomUUID() });
      clock.advance(2 * HOUR);
      await store.sessions.updateSessionMetadata(T, patched.id, { seen: true });
      expect(await store.sessions.expireSessions(clock.now() - HOUR, 100)).toBe(1);
      expect(await store.sessions.getSession(T, idle.id)).toBeNull();
      expect((await store.sessions.listSessions(T, ALL)).map((s) => s.id)).toEqual([patched.id]);
      await store.sessions.deleteSession(T, patched.id);
      expect(await store.sessions.listSessions(T, ALL)).toEqual([]);
      await expect(store.sessions.deleteSession(T, patched.id)).rejects.toMatchObject({ code: 'not_found' });
      expect(await store.sessions.expireSessions(clock.now(), 100)).toBe(0);
    });
  });
}
