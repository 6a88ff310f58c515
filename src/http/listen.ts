import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa, { type Middleware } from 'koa';

/** Where a server listens. */
export interface ListenAddress {
  /** 0 picks a free port. */
  port: number;
  /** @defaultValue '0.0.0.0' */
  host?: string;
}

/** A listening server. */
export interface ListeningServer {
  server: Server;
  /** Base URL with the port actually bound, e.g. `http://127.0.0.1:8422`. */
  url: string;
  port: number;
  /** Stops accepting, closes idle keep-alive sockets and resolves once every request ended; idempotent. */
  close(): Promise<void>;
}

/** Serves `middleware` alone, on a Koa app of its own, at `address`. */
export function serveMiddleware(middleware: Middleware, address: ListenAddress): Promise<ListeningServer> {
  const app = new Koa();
  app.use(middleware);
  return listen(app, address);
}

/** Serves a Koa app on `address` and resolves once it listens. */
export function listen(app: Koa, address: ListenAddress): Promise<ListeningServer> {
  return listenOn(createServer(app.callback()), address);
}

/**
 * The one way every agentplane server listens (API, worker probes, webhook receiver, chat
 * adapters): binds `server` to `address`, resolves with the base URL of the port actually
 * bound (a wildcard host reads as 127.0.0.1). Closing stops accepting and also closes
 * keep-alive sockets as their last response finishes.
 */
export async function listenOn(server: Server, address: ListenAddress): Promise<ListeningServer> {
  let closing: Promise<void> | undefined;
  // A keep-alive socket that finishes its last response after close() began would otherwise
  // hold the server open until its idle timeout.
  server.on('request', (_req, res: ServerResponse) => {
    res.once('finish', () => {
      if (closing) setImmediate(() => server.closeIdleConnections());
    });
  });
  const host = address.host ?? '0.0.0.0';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    server,
    url: `http://${hostPort(urlHost, port)}`,
    port,
    close: () => (closing ??= closeServer(server)),
  };
}

/** `host:port`, an IPv6 host in brackets. */
export function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeIdleConnections();
  });
}
