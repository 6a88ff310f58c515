import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';

/** The files a link may point at: the repository on disk, or an in-memory sample. */
export interface Tree {
  /** `file` or `dir` for a path relative to the repository root, undefined when absent. */
  kind(path: string): 'file' | 'dir' | undefined;
  read(path: string): string;
  /** True for a path that exists here but not in a clone (git-ignored: dist/, node_modules/). */
  ignored(path: string): boolean;
}

/** A relative link of a Markdown file, with its line. */
export interface Link {
  line: number;
  target: string;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;
const INLINE_LINK = /!?\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g;
const REFERENCE = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/;
const HTML_LINK = /<(?:a|img)\s[^>]*?(?:href|src)="([^"]*)"/gi;
const HTML_ANCHOR = /<a\s[^>]*?(?:id|name)="([^"]*)"/gi;
const ATX = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/;
const LINE_ANCHOR = /^L\d+(?:C\d+)?(?:-L\d+(?:C\d+)?)?$/;

/** The lines of `markdown` outside fenced code blocks, with inline code spans blanked. */
function proseLines(markdown: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, index) => {
    const opening = FENCE.exec(text)?.[1];
    if (fence) {
      if (opening && opening[0] === fence[0] && opening.length >= fence.length && text.trim() === opening) fence = undefined;
      return;
    }
    if (opening) {
      fence = opening;
      return;
    }
    out.push({ line: index + 1, text: text.replace(/(`+)(?:(?!\1).)+?\1/g, (span) => ' '.repeat(span.length)) });
  });
  return out;
}

/** Every link of a Markdown file that is not absolute (no scheme, not protocol-relative); an empty target (`[x]()`) included. */
export function relativeLinks(markdown: string): Link[] {
  const links: Link[] = [];
  for (const { line, text } of proseLines(markdown)) {
    const targets = [
      ...[...text.matchAll(INLINE_LINK)].map((m) => m[1]!),
      ...[...text.matchAll(HTML_LINK)].map((m) => m[1]!),
      ...(REFERENCE.exec(text) ? [REFERENCE.exec(text)![1]!] : []),
    ];
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
      links.push({ line, target });
    }
  }
  return links;
}

/**
 * The anchors GitHub gives the headings of a Markdown file: the heading's text, lower-cased,
 * without punctuation but `-` and `_`, spaces as `-`; a repeated slug gets `-1`, `-2`, …
 * Explicit `<a id>` / `<a name>` anchors count too.
 */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const lines = proseLines(markdown);
  lines.forEach(({ line, text }, i) => {
    for (const m of text.matchAll(HTML_ANCHOR)) anchors.add(m[1]!);
    const next = lines[i + 1];
    const setext = next?.line === line + 1 && text.trim() !== '' && !/^\s*([|>*+-]|\d+[.)])/.test(text) && /^\s{0,3}(=+|-+)\s*$/.test(next.text);
    const heading = ATX.exec(text)?.[1] ?? (setext ? text.trim() : undefined);
    if (heading === undefined) return;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  });
  return anchors;
}

/** GitHub's slug of a heading's Markdown text. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/**
 * The dead links of the Markdown file `file` (a path relative to the root of `tree`): an empty
 * target (`[above]()` goes nowhere); a target outside the repository, missing, or git-ignored;
 * an anchor that names no heading of its Markdown target (or, in another kind of file, is not a
 * line anchor such as `#L10-L20`).
 */
export function deadLinks(file: string, tree: Tree): string[] {
  const problems: string[] = [];
  for (const { line, target } of relativeLinks(tree.read(file))) {
    const problem = target === '' ? 'an empty link target' : checkLink(file, target, tree);
    if (problem) problems.push(`${file}:${line}: ${target || '(empty)'}: ${problem}`);
  }
  return problems;
}

function checkLink(file: string, target: string, tree: Tree): string | undefined {
  const hashAt = target.indexOf('#');
  const pathPart = (hashAt < 0 ? target : target.slice(0, hashAt)).replace(/\?.*$/, '');
  const anchor = hashAt < 0 ? undefined : decodeURIComponent(target.slice(hashAt + 1));
  const resolved = pathPart === '' ? file : posix.normalize(posix.join(posix.dirname(file), decodeURIComponent(pathPart)));
  if (resolved === '..' || resolved.startsWith('../') || posix.isAbsolute(resolved)) return 'outside the repository';
  const kind = tree.kind(resolved.replace(/\/$/, '') || '.');
  if (!kind) return 'no such file in the repository';
  if (tree.ignored(resolved)) return 'git-ignored: not in a clone';
  if (anchor === undefined || anchor === '') return undefined;
  if (kind === 'file' && resolved.endsWith('.md')) {
    return headingAnchors(tree.read(resolved)).has(anchor) ? undefined : `no heading #${anchor} in ${resolved}`;
  }
  return LINE_ANCHOR.test(anchor) ? undefined : `#${anchor} is neither a heading nor a line of ${resolved}`;
}

/** The repository at `root` on disk; ignored paths as `git check-ignore` says. */
export function diskTree(root: string): Tree {
  return {
    kind: (path) => {
      const full = join(root, path);
      if (!existsSync(full)) return undefined;
      return statSync(full).isDirectory() ? 'dir' : 'file';
    },
    read: (path) => readFileSync(join(root, path), 'utf8'),
    ignored: (path) => {
      try {
        execFileSync('git', ['check-ignore', '-q', path], { cwd: root, stdio: 'ignore' });
        return true;
      } catch (error) {
        if ((error as { status?: number }).status === 1) return false;
        throw new Error(`git check-ignore failed in ${root}: is it a git checkout?`, { cause: error });
      }
    },
  };
}

/** An in-memory tree of files by path; directories are implied by the paths. */
export function memoryTree(files: Record<string, string>, ignored: readonly string[] = []): Tree {
  return {
    kind: (path) => {
      if (path in files) return 'file';
      return path === '.' || Object.keys(files).some((name) => name.startsWith(`${path}/`)) ? 'dir' : undefined;
    },
    read: (path) => {
      const text = files[path];
      if (text === undefined) throw new Error(`no file ${path}`);
      return text;
    },
    ignored: (path) => ignored.some((prefix) => path === prefix || path.startsWith(`${prefix}/`)),
  };
}

/** The Markdown files of the repository at `root`: tracked, or new and not git-ignored. */
export function markdownFiles(root: string): string[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', '*.md'], { cwd: root, encoding: 'utf8' });
  return [...new Set(listed.split('\n').filter((path) => path !== '' && existsSync(join(root, path))))].sort();
}
