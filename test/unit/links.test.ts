import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { deadLinks, diskTree, headingAnchors, markdownFiles, memoryTree, relativeLinks, slug } from '../support/markdown-links.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('links of the documentation', () => {
  const tree = diskTree(ROOT);
  const files = markdownFiles(ROOT);

  it('covers README.md and every page of docs/', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/http-contract.md', 'docs/reference/deployment.md', 'docs/architecture.md']));
  });

  it.each(files)('every relative link of %s resolves in the repository, anchors included', (file) => {
    expect(deadLinks(file, tree)).toEqual([]);
  });
});

describe('the link check itself', () => {
  const sample = memoryTree(
    {
      'README.md': [
        '# Project',
        'See [the contract](docs/contract.md#error-model), [setup](#quick-start) and [config](src/config.ts#L10-L20).',
        '[shared](../shared/CONTRACT.md) [gone](docs/missing.md) [built](dist/main.js) [bad anchor](docs/contract.md#nope)',
        '[ref]: docs/contract.md#the-api-v2',
        '`[not a link](nowhere.md)` and <https://example.com> and [web](https://example.com/x.md)',
        '```sh',
        '[in a fence](fenced.md)',
        '```',
        '## Quick start',
      ].join('\n'),
      'docs/contract.md': '# Contract\n\n## Error model\n\n## The API (v2)\n\nBack to [the readme](../README.md#project).\n',
      'src/config.ts': 'export {};\n',
      'dist/main.js': '',
    },
    ['dist'],
  );

  it('reports each dead link with its line and reason, and nothing else', () => {
    expect(deadLinks('README.md', sample)).toEqual([
      'README.md:3: ../shared/CONTRACT.md: outside the repository',
      'README.md:3: docs/missing.md: no such file in the repository',
      'README.md:3: dist/main.js: git-ignored: not in a clone',
      'README.md:3: docs/contract.md#nope: no heading #nope in docs/contract.md',
    ]);
    expect(deadLinks('docs/contract.md', sample)).toEqual([]);
  });

  it('reports a link with an empty target: it goes nowhere', () => {
    const page = memoryTree({ 'docs/page.md': '# Page\n\nAs [above](), and [here](<>), and [a section](#page).\n' });
    expect(deadLinks('docs/page.md', page)).toEqual(['docs/page.md:3: (empty): an empty link target', 'docs/page.md:3: (empty): an empty link target']);
  });

  it('skips absolute links, code spans and fenced code', () => {
    expect(relativeLinks('[a](https://x.io) [b](mailto:a@b.c) [c](//cdn/x) `[d](e.md)`\n```\n[f](g.md)\n```\n[h](i.md)')).toEqual([
      { line: 5, target: 'i.md' },
    ]);
  });

  it('makes anchors as GitHub does', () => {
    expect(slug('Production: sizing and retention')).toBe('production-sizing-and-retention');
    expect(slug('`SERVICE_AUTH` and *roles*')).toBe('service_auth-and-roles');
    expect(slug('Ingress and Gateway API: server-sent events')).toBe('ingress-and-gateway-api-server-sent-events');
    expect(slug('[Links](x.md) & <code>tags</code>')).toBe('links--tags');
    expect([...headingAnchors('# Errors\n## Errors\nSetext\n---\n```\n# not a heading\n```\n<a id="custom"></a>')]).toEqual([
      'errors',
      'errors-1',
      'setext',
      'custom',
    ]);
  });
});
