import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The layering of ARCHITECTURE.md, checked on the import statements of src/: dependency
 * direction, ports free of adapters, one composition root, no import cycle.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

const IMPORT = /^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/gms;
/** A dynamic import, or a type written as one (`typeof import('…')`). */
const DYNAMIC_IMPORT = /\bimport\(\s*'([^']+)'\s*\)/g;

/** What `file` imports by `pattern`: local files as paths relative to the root, packages by name. */
function importsOf(file: string, pattern: RegExp): string[] {
  return [...readFileSync(file, 'utf8').matchAll(pattern)].map(({ 1: spec }) =>
    spec!.startsWith('.') ? relative(ROOT, resolve(dirname(file), spec!)).replace(/\.js$/, '.ts') : spec!,
  );
}

/** Every module of src/ (path relative to the root) with what it imports statically. */
const graph = new Map(filesUnder(SRC).map((file) => [relative(ROOT, file), importsOf(file, IMPORT)] as const));

/** The same modules with their dynamic imports too: what a module may load, now or later. */
const everyImport = new Map(filesUnder(SRC).map((file) => [relative(ROOT, file), [...importsOf(file, IMPORT), ...importsOf(file, DYNAMIC_IMPORT)]] as const));

const edgesOf = (modules: ReadonlyMap<string, readonly string[]>, predicate: (target: string) => boolean) =>
  [...modules].flatMap(([file, imports]) => imports.filter(predicate).map((target) => `${file} → ${target}`));
const importers = (predicate: (target: string) => boolean) => edgesOf(graph, predicate);

describe('architecture', () => {
  it('reads every module of src/', () => {
    expect(graph.size).toBeGreaterThan(50);
    expect(graph.get('src/main/compose.ts')).toContain('src/runtime/run-control.ts');
  });

  it('has no import cycle', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file].join(' → '));
        return;
      }
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) if (graph.has(next)) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it('imports ioredis only in the Redis adapters', () => {
    expect(importers((t) => t === 'ioredis').filter((edge) => !edge.startsWith('src/adapters/redis/'))).toEqual([]);
  });

  it('keeps the adapters apart: Redis never imports memory, memory never imports Redis', () => {
    expect(importers((t) => t.startsWith('src/adapters/memory/')).filter((e) => e.startsWith('src/adapters/redis/'))).toEqual([]);
    expect(importers((t) => t.startsWith('src/adapters/redis/')).filter((e) => e.startsWith('src/adapters/memory/'))).toEqual([]);
  });

  it('builds adapters only in the composition root', () => {
    // The integrations are a library mounted outside agentplane's composition too: a receiver
    // given no deduplicator remembers delivery ids in memory.
    const libraryDefault = (edge: string) => edge.startsWith('src/integrations/') && edge.endsWith('→ src/adapters/memory/deduplicator.ts');
    const outside = importers((t) => t.startsWith('src/adapters/')).filter(
      (edge) => !edge.startsWith('src/adapters/') && !edge.startsWith('src/main/compose.ts') && !libraryDefault(edge),
    );
    expect(outside).toEqual([]);
  });

  it('lets nothing import src/main but src/main, the package entry and the CLI', () => {
    const entries = (edge: string) => edge.startsWith('src/main/') || edge.startsWith('src/index.ts') || edge.startsWith('src/cli/');
    expect(importers((t) => t.startsWith('src/main/')).filter((e) => !entries(e))).toEqual([]);
  });

  it('keeps ports to interfaces and types over the domain', () => {
    const allowed = (t: string) => t.startsWith('src/domain/') || t.startsWith('src/ports/');
    expect(importers((t) => !allowed(t)).filter((e) => e.startsWith('src/ports/'))).toEqual([]);
    for (const [file] of [...graph].filter(([f]) => f.startsWith('src/ports/'))) {
      const code = readFileSync(join(ROOT, file), 'utf8');
      expect(code, `${file} declares a class or function`).not.toMatch(/^export (?:class|function|async function)\b/m);
    }
  });

  it('imports LangGraph (an optional peer dependency) only in src/langgraph/, which the rest loads dynamically', () => {
    expect(importers((t) => t.startsWith('@langchain/')).filter((e) => !e.startsWith('src/langgraph/'))).toEqual([]);
    expect(importers((t) => t.startsWith('src/langgraph/')).filter((e) => !e.startsWith('src/langgraph/'))).toEqual([]);
  });

  it('reaches the LangGraph plug-in only through its faces (index.ts; light.ts, which imports nothing of @langchain/*), and only from src/main/', () => {
    const FACES = ['src/langgraph/index.ts', 'src/langgraph/light.ts'];
    const into = edgesOf(everyImport, (t) => t.startsWith('src/langgraph/')).filter((e) => !e.startsWith('src/langgraph/'));
    expect(into.length, 'src/main/ loads the plug-in').toBeGreaterThan(0);
    expect(into.filter((edge) => !FACES.includes(edge.split(' → ')[1]!))).toEqual([]);
    expect(into.filter((edge) => !edge.startsWith('src/main/'))).toEqual([]);
  });

  it('keeps the light face light: nothing it imports, however deep, imports @langchain/*', () => {
    const reached = new Set<string>();
    const visit = (file: string) => {
      if (reached.has(file) || !graph.has(file)) return;
      reached.add(file);
      for (const next of graph.get(file)!) visit(next);
    };
    visit('src/langgraph/light.ts');
    expect(reached.size, 'light.ts exists').toBeGreaterThan(1);
    expect(edgesOf(graph, (t) => t.startsWith('@langchain/')).filter((edge) => reached.has(edge.split(' → ')[0]!))).toEqual([]);
  });

  it('keeps the LangGraph Server API services free of the transport: no Koa, nothing of src/http', () => {
    const transport = (t: string) => t === 'koa' || t.startsWith('koa-') || t.startsWith('@koa/') || t.startsWith('src/http/');
    expect(importers(transport).filter((e) => e.startsWith('src/langgraph-server/'))).toEqual([]);
  });

  it('has the composition root take the services, not the transport: compose.ts imports nothing of src/http', () => {
    expect(importers((t) => t.startsWith('src/http/')).filter((e) => e.startsWith('src/main/compose.ts'))).toEqual([]);
  });

  it('lets only route files and the apps that assemble them into routers import a route file', () => {
    const isRoute = (path: string) => path.startsWith('src/http/routes/') || /^src\/http\/langgraph\/[^/]+-routes\.ts$/.test(path);
    const assemblers = ['src/http/app.ts', 'src/main/service-app.ts'];
    const outside = importers(isRoute).filter((edge) => {
      const from = edge.split(' → ')[0]!;
      return !isRoute(from) && !assemblers.includes(from);
    });
    expect(outside).toEqual([]);
    expect([...graph.keys()].filter(isRoute).length).toBeGreaterThan(10);
  });

  it('names no file of src/http/langgraph/ as a service of src/langgraph-server/ (no name twins)', () => {
    const names = (dir: string) => new Set([...graph.keys()].filter((f) => f.startsWith(dir)).map((f) => f.slice(dir.length)));
    const services = names('src/langgraph-server/');
    expect(services.size).toBeGreaterThan(5);
    expect([...names('src/http/langgraph/')].filter((name) => services.has(name))).toEqual([]);
  });

  it('keeps the benches off the test tree: bench/ imports nothing of test/; scripts/dev/, which both share, neither of them nor vitest', () => {
    const modulesUnder = (dir: string) =>
      new Map(filesUnder(join(ROOT, dir)).map((file) => [relative(ROOT, file), [...importsOf(file, IMPORT), ...importsOf(file, DYNAMIC_IMPORT)]] as const));
    const bench = modulesUnder('bench');
    const shared = modulesUnder('scripts/dev');
    expect(bench.size).toBeGreaterThan(10);
    expect(edgesOf(bench, (t) => t.startsWith('test/'))).toEqual([]);
    expect(edgesOf(bench, (t) => t.startsWith('scripts/dev/')).length, 'the benches use scripts/dev/').toBeGreaterThan(0);
    expect(edgesOf(shared, (t) => t.startsWith('test/') || t.startsWith('bench/') || t === 'vitest' || t.startsWith('vitest/'))).toEqual([]);
  });

  it('has every room import only rooms below it (the floors of docs/architecture.md), none beside or above', () => {
    // A room is a folder of src/ or a file at its top. Rooms on one floor import nothing of each other.
    const FLOORS: readonly (readonly string[])[] = [
      ['domain', 'client'],
      ['ports', 'config-redis'],
      ['config'],
      ['observability'],
      ['adapters', 'runtime'],
      ['agents', 'auth', 'langgraph-server'],
      ['langgraph', 'http'],
      ['integrations'],
      ['main'],
      ['index', 'cli'],
    ];
    const floorOf = new Map(FLOORS.flatMap((rooms, floor) => rooms.map((room) => [room, floor] as const)));
    const roomOf = (path: string) => path.slice('src/'.length).split('/')[0]!.replace(/\.ts$/, '');
    const rooms = new Set([...graph.keys()].map(roomOf));
    expect([...rooms].filter((room) => !floorOf.has(room)), 'every room has a floor').toEqual([]);
    const upward = importers((t) => t.startsWith('src/')).filter((edge) => {
      const [from, to] = edge.split(' → ').map(roomOf) as [string, string];
      return from !== to && floorOf.get(from)! <= floorOf.get(to)!;
    });
    expect(upward).toEqual([]);
  });

  it('keeps the domain free of the rest of agentplane', () => {
    const outward = importers((t) => t.startsWith('src/') && !t.startsWith('src/domain/'));
    expect(outward.filter((e) => e.startsWith('src/domain/'))).toEqual([]);
  });
});
