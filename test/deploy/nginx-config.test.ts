import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

/*
 * deploy/nginx/agentplane.conf, the one nginx configuration of compose and the e2e tests:
 * the SSE-safe proxy settings are where they take effect, and nginx accepts the file with a
 * loopback upstream rendered the way deploy/nginx/README.md describes.
 */

const DIR = new URL('../../deploy/nginx/', import.meta.url);
const read = (file: string): string => readFileSync(new URL(file, DIR), 'utf8');
const main = read('agentplane.conf');

/** The body of the first `<head> { … }` block in `text`, braces balanced. */
function block(text: string, head: RegExp): string {
  const match = head.exec(text);
  if (!match) throw new Error(`no block ${head}`);
  let depth = 1;
  for (let i = match.index + match[0].length; i < text.length; i++) {
    if (text[i] === '{') depth++;
    if (text[i] === '}' && --depth === 0) return text.slice(match.index + match[0].length, i);
  }
  throw new Error(`unbalanced block ${head}`);
}

/** `text` without nested `{ … }` blocks: the directives of that level only. */
function ownDirectives(text: string): string {
  let out = '';
  let depth = 0;
  for (const char of text) {
    if (char === '{') depth++;
    if (depth === 0) out += char;
    if (char === '}') depth--;
  }
  return out;
}

const withoutComments = main.replace(/#.*$/gm, '');
const server = block(withoutComments, /server\s*\{/);
const serverLevel = ownDirectives(server);
const stream = block(withoutComments, /location\s*=\s*\/api\/events\/stream\s*\{/);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function findNginx(): string {
  for (const candidate of [process.env.NGINX_BIN, 'nginx', '/usr/sbin/nginx']) {
    if (candidate && spawnSync(candidate, ['-v']).status === 0) return candidate;
  }
  throw new Error('nginx is needed for this test and the e2e tests: apt-get install nginx (or set NGINX_BIN)');
}

describe('deploy/nginx/agentplane.conf', () => {
  it('streams /api/events/stream: no buffering, no cache, a read timeout of an hour', () => {
    expect(stream).toMatch(/proxy_buffering\s+off;/);
    expect(stream).toMatch(/proxy_cache\s+off;/);
    expect(stream).toMatch(/proxy_read_timeout\s+1h;/);
    expect(stream).toMatch(/proxy_pass\s+http:\/\/agentplane_api;/);
  });

  it('speaks HTTP/1.1 with keep-alive upstream and forwards the client address and request id', () => {
    expect(serverLevel).toMatch(/proxy_http_version\s+1\.1;/);
    expect(serverLevel).toMatch(/proxy_set_header\s+Connection\s+"";/);
    expect(serverLevel).toMatch(/proxy_set_header\s+X-Forwarded-For\s+\$proxy_add_x_forwarded_for;/);
    expect(serverLevel).toMatch(/proxy_set_header\s+X-Request-Id\s+\$\w+;/);
    expect(withoutComments).toMatch(/map\s+\$http_x_request_id\s+\$agentplane_request_id/);
  });

  it('sets headers only at server level, so no location silently drops them', () => {
    // A location with any proxy_set_header inherits none of the server's.
    for (const location of server.matchAll(/location[^{]*\{([^}]*)\}/g)) {
      expect(location[1]).not.toMatch(/proxy_set_header/);
    }
  });

  it('skips a replica that is gone or draining', () => {
    expect(serverLevel).toMatch(/proxy_next_upstream\s+error\s+timeout\s+http_502\s+http_503;/);
  });

  it('includes the upstream and server files that compose and the tests provide', () => {
    expect(ownDirectives(block(withoutComments, /http\s*\{/))).toMatch(/include\s+upstream\.conf;/);
    expect(serverLevel).toMatch(/include\s+server\.conf;/);
    expect(withoutComments).toMatch(/^\s*daemon\s+off;/m);
    expect(withoutComments).toMatch(/^\s*pid\s+[^/\s][^;]*;/m);
  });

  it("compose's upstream closes idle connections before a draining API closes them (SERVICE_SHUTDOWN_DELAY_MS, 2 s)", () => {
    const upstream = block(read('upstream.conf').replace(/#.*$/gm, ''), /upstream\s+agentplane_api\s*\{/);
    expect(upstream).toMatch(/keepalive\s+\d+;/);
    const idle = /keepalive_timeout\s+(\d+)s;/.exec(upstream)?.[1];
    expect(Number(idle) * 1000).toBeLessThan(loadConfig({}).SERVICE_SHUTDOWN_DELAY_MS);
  });

  describe('nginx -t with a loopback upstream, as deploy/nginx/README.md describes', () => {
    const prefix = mkdtempSync(join(tmpdir(), 'agentplane-nginx-'));
    afterAll(() => rmSync(prefix, { recursive: true, force: true }));

    it('accepts the configuration', async () => {
      const nginx = findNginx();
      copyFileSync(new URL('agentplane.conf', DIR), join(prefix, 'agentplane.conf'));
      writeFileSync(
        join(prefix, 'upstream.conf'),
        [
          'upstream agentplane_api {',
          `    server 127.0.0.1:${await freePort()} max_fails=1 fail_timeout=5s;`,
          `    server 127.0.0.1:${await freePort()} max_fails=1 fail_timeout=5s;`,
          '    keepalive 32;',
          '    keepalive_timeout 1s;',
          '}',
          '',
        ].join('\n'),
      );
      writeFileSync(
        join(prefix, 'server.conf'),
        `listen 127.0.0.1:${await freePort()};\naccess_log access.log agentplane;\n`,
      );
      const args = ['-t', '-p', `${prefix}/`, '-c', join(prefix, 'agentplane.conf'), '-e', join(prefix, 'error.log')];
      let output: string;
      try {
        output = execFileSync(nginx, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
        output += readFileSync(join(prefix, 'error.log'), 'utf8');
      } catch (error) {
        const failed = error as { stderr?: string };
        throw new Error(`nginx -t refused the configuration:\n${failed.stderr ?? String(error)}`, { cause: error });
      }
      expect(output).not.toMatch(/\[emerg\]/);
    });
  });
});
