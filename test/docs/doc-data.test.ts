import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { blocksOf, docPages, isData, runs, type Block } from './doc-pages.js';

/**
 * The JSON and YAML examples of the documentation (README.md, CONTRIBUTING.md, docs/**): each
 * block tagged `json` or `yaml` parses as a whole document, as a reader pastes it into a file
 * (`langgraph.json`, Helm values). A block that shows only a part of a document is tagged
 * `json no-run` (or `yaml no-run`) and only counted.
 */

const blocks = docPages().flatMap((file) => blocksOf(file).filter(isData));

/** Why `block` does not parse, or undefined. */
function parseError(block: Block): string | undefined {
  if (block.lang === 'json') {
    try {
      JSON.parse(block.body);
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  }
  const errors = parseAllDocuments(block.body, { uniqueKeys: true }).flatMap((doc) => ('errors' in doc ? doc.errors : []));
  return errors.length === 0 ? undefined : errors.map((error) => error.message.split('\n')[0]).join('; ');
}

describe('the JSON and YAML examples of the documentation', () => {
  it('finds them: langgraph.json, an error body, Helm values', () => {
    console.log(`documentation data examples: ${blocks.filter(runs).length} parsed, ${blocks.filter((b) => !runs(b)).length} marked no-run`);
    expect(blocks.filter(runs).map((block) => `${block.file} ${block.lang}`)).toEqual(
      expect.arrayContaining(['docs/guides/langgraph.md json', 'docs/reference/errors.md json', 'docs/guides/scaling-and-production.md yaml']),
    );
  });

  it('parses every one not marked no-run', () => {
    const failures = blocks.filter(runs).flatMap((block) => {
      const error = parseError(block);
      return error ? [`${block.file}:${block.line} (${block.lang}): ${error}`] : [];
    });
    expect(failures).toEqual([]);
  });

  it('would tell a broken one', () => {
    const broken = (lang: string, body: string): Block => ({ file: 'x.md', line: 1, lang, flags: [], body, section: '' });
    expect(parseError(broken('json', '{"graphs": {"a": "./a.ts:graph",}}'))).toBeDefined();
    expect(parseError(broken('json', '{"graphs": {"a": "./a.ts:graph"}}'))).toBeUndefined();
    expect(parseError(broken('yaml', 'config:\n  A: 1\n  A: 2\n'))).toBeDefined();
    expect(parseError(broken('yaml', 'config:\n  A: [1\n'))).toBeDefined();
    expect(parseError(broken('yaml', 'config:\n  A: 1\n'))).toBeUndefined();
  });
});
