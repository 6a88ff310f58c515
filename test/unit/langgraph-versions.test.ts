import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { checkLangGraphVersions, installedFrom, satisfies, SUPPORTED, unsupportedVersion } from '../../src/langgraph/versions.js';
import { ROOT } from '../support/build.js';

/*
 * The check of src/langgraph/versions.ts: which LangGraph.js versions agentplane runs, where it
 * finds the installed ones (the graphs' copy from their folders, agentplane's own), and the one
 * line that refuses another. Packages are written as bare package.json files in a temporary
 * folder; test/packaging/langgraph-versions.test.ts runs real installs.
 */

const work = mkdtempSync(join(tmpdir(), 'agentplane-lgversions-unit-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function writePackage(dir: string, name: string, version: string): void {
  const at = join(dir, 'node_modules', name);
  mkdirSync(at, { recursive: true });
  writeFileSync(join(at, 'package.json'), JSON.stringify({ name, version }));
}

function writeFile(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

/** A project folder with a langgraph.json whose graph file is `graphFile` (relative), and agentplane's folder beside it. */
function project(name: string, graphFile = './graph.js'): { dir: string; config: string; own: string } {
  const dir = join(work, name);
  writeFile(join(dir, 'langgraph.json'), JSON.stringify({ graphs: { g: `${graphFile}:graph` } }));
  const own = join(dir, 'node_modules/agentplane/dist/src/langgraph');
  mkdirSync(own, { recursive: true });
  return { dir, config: join(dir, 'langgraph.json'), own };
}

const LINE = 'agentplane runs @langchain/langgraph ^1.0.0 with @langchain/langgraph-checkpoint ^1.2.2 and @langchain/core ^1.4.0';

describe('satisfies: a caret range as npm reads it', () => {
  const langgraph = SUPPORTED['@langchain/langgraph'];
  const checkpoint = SUPPORTED['@langchain/langgraph-checkpoint'];

  it('admits every LangGraph.js 1.x, from 1.0.0', () => {
    for (const version of ['1.0.0', '1.0.15', '1.4.21', '1.7.3', '1.99.0', 'v1.2.0', '1.7.3+build.5']) expect(satisfies(version, langgraph), version).toBe(true);
  });

  it('refuses 0.x, 2.x, prereleases of 1.0.0 and what is not a version', () => {
    for (const version of ['0.2.74', '0.3.12', '0.4.10', '0.0.1', '2.0.0', '2.0.0-alpha.1', '1.0.0-alpha.5', '1', '1.0', 'latest', '', 'unknown']) {
      expect(satisfies(version, langgraph), version).toBe(false);
    }
  });

  it('admits a prerelease of a later 1.x, whose code is that release', () => {
    expect(satisfies('1.8.0-rc.1', langgraph)).toBe(true);
  });

  it('admits the checkpoint package from 1.2.2 (its writesSortKey and compareWritesSortKeys), not before', () => {
    for (const version of ['1.2.2', '1.2.10', '1.3.0']) expect(satisfies(version, checkpoint), version).toBe(true);
    for (const version of ['1.2.1', '1.1.6', '1.0.0', '0.1.3', '0.0.18', '1.2.2-rc.0', '2.0.0']) expect(satisfies(version, checkpoint), version).toBe(false);
  });

  it('says what package.json says: its peerDependencies are the supported ranges', () => {
    const peers = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> }).peerDependencies;
    expect(peers['@langchain/langgraph']).toBe('^1.0.0');
    expect(peers['@langchain/langgraph-checkpoint']).toBe('^1.2.2');
    expect(peers['@langchain/core']).toBe('^1.4.0');
  });
});

describe('installedFrom: the copy a bare import resolves', () => {
  it('is the nearest node_modules on the way up, with its version', () => {
    writePackage(join(work, 'up'), '@langchain/langgraph', '1.0.0');
    writePackage(join(work, 'up/inner'), '@langchain/langgraph', '0.4.10');
    mkdirSync(join(work, 'up/inner/deep/er'), { recursive: true });
    expect(installedFrom(join(work, 'up/inner/deep/er'), '@langchain/langgraph', 'graphs')).toEqual({
      name: '@langchain/langgraph', version: '0.4.10', dir: join(work, 'up/inner/node_modules/@langchain/langgraph'), resolvedBy: 'graphs',
    });
    expect(installedFrom(join(work, 'up'), '@langchain/langgraph', 'agentplane')?.version).toBe('1.0.0');
  });

  it('is undefined when none is installed', () => {
    mkdirSync(join(work, 'none'), { recursive: true });
    expect(installedFrom(join(work, 'none'), '@langchain/langgraph-checkpoint', 'agentplane')).toBeUndefined();
  });
});

describe('unsupportedVersion: the one line', () => {
  it('names the package, its version and folder, who imports it, the supported ranges and the fix', () => {
    expect(unsupportedVersion({ name: '@langchain/langgraph', version: '0.2.74', dir: '/p/node_modules/@langchain/langgraph', resolvedBy: 'graphs' })).toBe(
      `@langchain/langgraph 0.2.74 (/p/node_modules/@langchain/langgraph, the copy the graphs import) is not supported: ${LINE}; npm install @langchain/langgraph@^1 @langchain/core@^1`,
    );
    expect(unsupportedVersion({ name: '@langchain/langgraph-checkpoint', version: '1.0.0', dir: '/p/c', resolvedBy: 'agentplane' })).toBe(
      `@langchain/langgraph-checkpoint 1.0.0 (/p/c, the copy agentplane imports) is not supported: ${LINE}; npm install @langchain/langgraph-checkpoint@^1.2.2`,
    );
  });

  it('is undefined for a supported version', () => {
    expect(unsupportedVersion({ name: '@langchain/langgraph', version: '1.0.0', dir: '/p', resolvedBy: 'graphs' })).toBeUndefined();
    expect(unsupportedVersion({ name: '@langchain/langgraph-checkpoint', version: '1.2.2', dir: '/p', resolvedBy: 'agentplane' })).toBeUndefined();
  });
});

describe('checkLangGraphVersions: at start, before LangGraph is imported', () => {
  it('passes the oldest supported and the newest 1.x', () => {
    for (const [name, langgraph, checkpoint] of [['oldest', '1.0.0', '1.2.2'], ['newest', '1.7.3', '1.2.2']] as const) {
      const { dir, config, own } = project(name);
      writePackage(dir, '@langchain/langgraph', langgraph);
      writePackage(dir, '@langchain/langgraph-checkpoint', checkpoint);
      expect(() => checkLangGraphVersions(config, own)).not.toThrow();
    }
  });

  it('refuses a 0.x the graphs import with a ConfigError of SERVICE_LANGGRAPH_JSON in one line', () => {
    const { dir, config, own } = project('zero');
    writePackage(dir, '@langchain/langgraph', '0.2.74');
    writePackage(dir, '@langchain/langgraph-checkpoint', '0.0.18');
    let error: unknown;
    try {
      checkLangGraphVersions(config, own);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe('SERVICE_LANGGRAPH_JSON');
    expect((error as Error).message).toBe(
      `Invalid configuration: SERVICE_LANGGRAPH_JSON: @langchain/langgraph 0.2.74 (${join(dir, 'node_modules/@langchain/langgraph')}, the copy the graphs import) ` +
        `is not supported: ${LINE}; npm install @langchain/langgraph@^1 @langchain/core@^1`,
    );
    expect((error as Error).message).not.toContain('\n');
  });

  it("refuses a graph file's own older copy, found from the graph's folder, though agentplane's is supported", () => {
    const { dir, config, own } = project('nested', './graphs/graph.js');
    writePackage(dir, '@langchain/langgraph', '1.7.3');
    writePackage(dir, '@langchain/langgraph-checkpoint', '1.2.2');
    writePackage(join(dir, 'graphs'), '@langchain/langgraph', '0.4.10');
    expect(() => checkLangGraphVersions(config, own)).toThrow(/^Invalid configuration: SERVICE_LANGGRAPH_JSON: @langchain\/langgraph 0\.4\.10 \(.*\/graphs\/node_modules\/@langchain\/langgraph, the copy the graphs import\)/);
  });

  it('refuses a checkpoint package older than the saver needs (LangGraph.js 1.0 locked with its 1.0 checkpoints)', () => {
    const { dir, config, own } = project('old-checkpoint');
    writePackage(dir, '@langchain/langgraph', '1.0.0');
    writePackage(dir, '@langchain/langgraph-checkpoint', '1.0.0');
    expect(() => checkLangGraphVersions(config, own)).toThrow(
      `Invalid configuration: SERVICE_LANGGRAPH_JSON: @langchain/langgraph-checkpoint 1.0.0 (${join(dir, 'node_modules/@langchain/langgraph-checkpoint')}, the copy agentplane imports) is not supported: ${LINE}; npm install @langchain/langgraph-checkpoint@^1.2.2`,
    );
  });

  it('refuses an @langchain/core older than checkpoint 1.2.2 imports (1.0.1: no utils/uuid)', () => {
    const { dir, config, own } = project('old-core');
    writePackage(dir, '@langchain/langgraph', '1.0.0');
    writePackage(dir, '@langchain/langgraph-checkpoint', '1.2.2');
    writePackage(dir, '@langchain/core', '1.0.1');
    expect(() => checkLangGraphVersions(config, own)).toThrow(
      `Invalid configuration: SERVICE_LANGGRAPH_JSON: @langchain/core 1.0.1 (${join(dir, 'node_modules/@langchain/core')}, the copy agentplane imports) is not supported: ${LINE}; npm install @langchain/core@^1.4.0`,
    );
  });

  it('leaves a package that is not installed to the import that needs it', () => {
    const { config, own } = project('bare');
    expect(() => checkLangGraphVersions(config, own)).not.toThrow();
  });

  it("passes this repository's own LangGraph.js (the newest 1.x)", () => {
    const { config } = project('repo');
    expect(() => checkLangGraphVersions(config)).not.toThrow();
  });
});
