import type { Logger } from '../logger.js';
import { deferredServing } from './deferred-serving.js';
import { startHttpServer } from './http-server.js';
import type { Readiness } from './readiness.js';

/** The HTTP server of a process that listens before its service exists (see `listenAtOnce`). */
export type Front = ReturnType<typeof listenAtOnce>;

/**
 * The HTTP server, listening now in front of a service that does not exist yet: `/healthz`
 * answers, `/readyz` reads `readiness`, everything else waits for `serving` to hand the app and
 * the edge over. `close` stops it; `cut` ends a start that failed, cutting the requests that wait.
 * Both wait until the server listens: one closed before that would still open its port afterwards.
 * `logged` is said with the `listening` line (the process's role).
 */
export function listenAtOnce(options: {
  readonly http: { readonly port: number; readonly host: string; readonly publicUrl: string };
  readonly readiness: Readiness;
  readonly isEdgeHost: (host: string | undefined) => boolean;
  readonly log: Logger;
  readonly logged: Record<string, unknown>;
}) {
  const { http, log } = options;
  const serving = deferredServing(options.readiness, options.isEdgeHost);
  let listened = () => {};
  const listening = new Promise<void>((resolve) => {
    listened = resolve;
  });
  const server = startHttpServer(
    serving.app,
    http,
    (info) => {
      log.info({ port: info.port, publicUrl: http.publicUrl, ...options.logged }, 'listening');
      listened();
    },
    serving.front,
  );
  /** Stops accepting; requests under way get `graceMs` to finish (without it, all they need). */
  const close = async (graceMs?: number) => {
    await listening;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      // Keep-alive connections would hold `close` open until they end; idle ones go now.
      server.closeIdleConnections();
      // Answers that outlast the grace are cut.
      if (graceMs !== undefined) setTimeout(() => server.closeAllConnections(), graceMs).unref();
    });
  };
  return {
    serving,
    close,
    async cut() {
      await listening;
      serving.cut();
      server.closeAllConnections();
      await close(0);
    },
  };
}
