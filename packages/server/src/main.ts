import { collectDefaultMetrics } from 'prom-client';
import { startAdminSocket } from './admin/admin-socket.js';
import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config/config.js';
import { resolveSecrets } from './config/dev-keys.js';
import { createContext, startContext, stopContext } from './context.js';
import { createEdgeProxy } from './edge/edge-proxy.js';
import { startHttpServer } from './http/http-server.js';
import { createLogger, subsystemLoggers, warnLoudly } from './logger.js';

/**
 * What this process does. `all`: the API, the dashboard, the edge (Agents' hosts) and the jobs.
 * `api`: the same without jobs; it keeps the edge, so a deployment of API replicas and workers
 * needs no process of its own for Agents' URLs. `edge`: Agents' hosts only (plus the health
 * checks on any other host), to run the edge apart from the API. `worker`: jobs only, no HTTP.
 */
type Role = 'all' | 'api' | 'edge' | 'worker';

/** Process entry: parse the environment once, build the context, serve, stop cleanly on signals. */
async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const role = parseRole(argv);
  const { config, secrets: rawSecrets } = loadConfig(env);
  const loggers = subsystemLoggers(createLogger(config));
  const secrets = await resolveSecrets(config, rawSecrets, (message) =>
    warnLoudly(loggers.root, message),
  );
  if (config.compute.driver === 'local') {
    // Said once and plainly: loadConfig refuses this driver in production, and nowhere else is it safe.
    loggers.root.warn(
      { computeDriver: 'local' },
      "COMPUTE_DRIVER=local is for development only: its machines run as this service's own user, not isolated, so code in any Agent or Plain VM can read DATA_DIR (keys, database), other machines' tokens and this process's environment",
    );
  }
  const ctx = await createContext(config, secrets, { loggers });
  // The process's own (CPU, memory, event loop lag), beside the service's; in the process entry
  // only, since it watches the event loop from registration on.
  collectDefaultMetrics({ register: ctx.metrics.registry });
  // Migrations, the job queue and the first reconciles run while the HTTP server already answers:
  // /healthz at once, /readyz "not_ready" until they are done, every other request once they are.
  const starting = startContext(ctx, { work: role === 'all' || role === 'worker' });
  // A failure is reported by the `await` below; this only keeps it from counting as unhandled.
  starting.catch(() => {});

  const closers: (() => Promise<void>)[] = [];
  if (role !== 'worker') {
    const app =
      role === 'edge'
        ? createApp(ctx, { only: 'operations', starting })
        : createApp(ctx, { starting });
    const edge = createEdgeProxy({
      routes: ctx.edgeRoutes,
      agentOrigin: config.http.agentOrigin,
      publicUrl: config.http.publicUrl,
      trust: config.http,
      log: loggers.root.child({ subsystem: 'edge' }),
    });
    const server = startHttpServer(
      app,
      config.http,
      (info) =>
        loggers.root.info({ port: info.port, publicUrl: config.http.publicUrl, role }, 'listening'),
      edge,
    );
    closers.push(
      () =>
        new Promise((resolve) => {
          server.close(() => resolve());
          // Keep-alive connections and proxied WebSockets would hold `close` open until they end.
          server.closeIdleConnections();
          edge.close();
        }),
    );
  }
  try {
    await starting;
  } catch (error) {
    await Promise.all(closers.map((close) => close()));
    await stopContext(ctx).catch(() => {});
    throw error;
  }
  // The operator CLI reaches this process through a socket in DATA_DIR while it holds the database.
  const adminSocket = await startAdminSocket(ctx);
  closers.push(() => adminSocket.close());

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      loggers.root.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    loggers.root.info({ signal }, 'shutting down');
    await Promise.all(closers.map((close) => close()));
    await stopContext(ctx);
    loggers.root.info('stopped');
  };
  process.on('SIGTERM', (signal) => void stop(signal));
  process.on('SIGINT', (signal) => void stop(signal));
}

function parseRole(argv: readonly string[]): Role {
  const arg = argv.find((a) => a.startsWith('--role='))?.slice('--role='.length) ?? 'all';
  if (arg === 'all' || arg === 'api' || arg === 'edge' || arg === 'worker') return arg;
  throw new ConfigError([`--role: expected all, api, edge or worker, got "${arg}"`]);
}

main(process.argv.slice(2), process.env).catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error(error);
  process.exitCode = 1;
});
