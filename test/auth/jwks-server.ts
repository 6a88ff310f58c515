import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, type CryptoKey, type JWK } from 'jose';

/** One RSA signing key of the fake issuer. */
export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
  publicPem: string;
}

export async function rsaSigningKey(kid: string, modulusLength = 2048): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { modulusLength, extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  return { kid, privateKey, publicJwk, publicPem: await exportSPKI(publicKey) };
}

/**
 * A real local HTTP server playing an identity provider's JWKS endpoint. The served keys can be
 * replaced while it runs (rotation), it counts its fetches, and it can be told to fail.
 */
export class JwksServer {
  keys: JWK[] = [];
  fetches = 0;
  failing = false;
  /** Spaces added to the served JSON, to make it as big as a test needs. */
  padding = 0;
  /** Send the body in pieces without a Content-Length. */
  chunked = false;
  private readonly server: Server = createServer((req, res) => {
    this.fetches += 1;
    if (this.failing || req.url !== '/.well-known/jwks.json') {
      res.writeHead(this.failing ? 500 : 404).end();
      return;
    }
    const body = JSON.stringify({ keys: this.keys }) + ' '.repeat(this.padding);
    if (!this.chunked) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    for (let at = 0; at < body.length; at += 64 * 1024) res.write(body.slice(at, at + 64 * 1024));
    res.end();
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/.well-known/jwks.json`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
