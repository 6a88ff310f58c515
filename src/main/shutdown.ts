import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { Lifecycle } from '../http/deps.js';

export interface ShutdownOptions {
  server: Server;
  lifecycle: Lifecycle;
  logger: Logger;
  /** Time readiness answers 503 while still serving, so load balancers stop routing here. */
  delayMs: number;
  /** Upper bound of the whole sequence; past it the process exits 1. */
  timeoutMs: number;
  /** Ends long-lived responses (SSE) so clients reconnect elsewhere. */
  endStreams?: () => void;
  /** Closes queues, subscribers and Redis, in order, after requests drained. */
  close: () => Promise<void>;
  exit?: (code: number) => void;
}

/**
 * Ordered graceful shutdown: readiness 503 → (delay) → stop accepting → end streams →
 * drain in-flight requests → close resources → exit 0. A second signal does not restart it;
 * a force-exit timer bounds it.
 */
export function createShutdown(options: ShutdownOptions): (reason: string) => Promise<void> {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let running: Promise<void> | undefined;

  const sequence = async (reason: string): Promise<void> => {
    const { server, lifecycle, logger } = options;
    logger.info({ reason }, 'graceful shutdown started');
    lifecycle.draining = true;
    const force = setTimeout(() => {
      logger.error({ timeoutMs: options.timeoutMs }, 'graceful shutdown timed out');
      exit(1);
    }, options.timeoutMs);
    force.unref();
    try {
      if (options.delayMs > 0) await new Promise((r) => setTimeout(r, options.delayMs));
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      options.endStreams?.();
      server.closeIdleConnections();
      await closed;
      await options.close();
      clearTimeout(force);
      logger.info('graceful shutdown complete');
      exit(0);
    } catch (error) {
      logger.error({ err: error }, 'graceful shutdown failed');
      exit(1);
    }
  };

  return (reason) => (running ??= sequence(reason));
}

/** Wires SIGTERM and SIGINT to the shutdown sequence. */
export function onTerminationSignals(shutdown: (reason: string) => Promise<void>): void {
  // `on`, not `once`: a second signal (Ctrl-C delivered twice) must not kill the process mid-drain.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void shutdown(signal));
}
