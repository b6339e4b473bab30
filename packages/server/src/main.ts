import { ComputeUnavailable } from './adapters/compute/compute-driver.js';
import { createComputeDriver } from './adapters/compute/create-compute-driver.js';
import { type Config, ConfigError, loadConfig } from './config/config.js';
import { secureDataDir } from './config/data-dir.js';
import { resolveSecrets } from './config/dev-keys.js';
import type { AppContext } from './context.js';
import { agentHostMatcher } from './edge/edge-host.js';
import type { EdgeProxy } from './edge/edge-proxy.js';
import { deferredServing } from './http/deferred-serving.js';
import { startHttpServer } from './http/http-server.js';
import { createLogger, type Loggers, subsystemLoggers, warnLoudly } from './logger.js';

/**
 * What this process does. `all`: the API, the dashboard, the edge (Agents' hosts) and the jobs.
 * `api`: the same without jobs; it keeps the edge, so a deployment of API replicas and workers
 * needs no process of its own for Agents' URLs. `edge`: Agents' hosts only (plus the health
 * checks on any other host), to run the edge apart from the API. `worker`: jobs only, no HTTP.
 */
type Role = 'all' | 'api' | 'edge' | 'worker';

/**
 * Process entry: parse the environment once, make the compute driver (a driver that cannot start
 * stops the process here, before it listens), listen at once (http/deferred-serving.ts), then load
 * the rest of the service, open the database and start; stop cleanly on signals. Only what the
 * first steps need is imported up front: the service's modules load while /healthz already answers.
 */
async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  // Before anything writes: what the service creates (the embedded database's files, keys,
  // machines, mail) is its user's alone.
  process.umask(0o077);
  const role = parseRole(argv);
  const { config, secrets: rawSecrets } = loadConfig(env);
  const loggers = subsystemLoggers(createLogger(config));
  const { tightened } = await secureDataDir(config.dataDir);
  if (tightened > 0) {
    loggers.root.warn(
      { dataDir: config.dataDir, tightened },
      'DATA_DIR was open to other users: it and everything in it are now owner-only (0700 directories, 0600 files)',
    );
  }
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
  // Before listening and before the database: a driver that cannot start (Incus unreachable, a
  // refused token) ends the start here, with nothing open and nothing said about listening.
  const compute = await createComputeDriver(
    config.compute,
    config.dataDir,
    loggers.root.child({ subsystem: 'compute' }),
    secrets,
  );
  const front = role === 'worker' ? undefined : listenAtOnce(config, loggers, role);

  // Loaded while /healthz answers: everything the service is made of.
  let context: typeof import('./context.js') | undefined;
  let ctx: AppContext | undefined;
  let edge: EdgeProxy | undefined;
  try {
    const [contextModule, { createApp }, { createEdgeProxy }, { collectDefaultMetrics }] =
      await Promise.all([
        import('./context.js'),
        import('./app.js'),
        import('./edge/edge-proxy.js'),
        import('prom-client'),
      ]);
    context = contextModule;
    ctx = await context.createContext(config, secrets, { loggers, compute });
    // The process's own (CPU, memory, event loop lag), beside the service's; in the process entry
    // only, since it watches the event loop from registration on.
    collectDefaultMetrics({ register: ctx.metrics.registry });
    // Migrations, the job queue and the first reconciles run while the app already answers:
    // /readyz "not_ready" until they are done, every other request once they are.
    const starting = context.startContext(ctx, { work: role === 'all' || role === 'worker' });
    // A failure is reported by the `await` below; this only keeps it from counting as unhandled.
    starting.catch(() => {});
    if (front) {
      front.serving.serveApp(
        role === 'edge'
          ? createApp(ctx, { only: 'operations', starting })
          : createApp(ctx, { starting }),
      );
      const proxy = createEdgeProxy({
        routes: ctx.edgeRoutes,
        gateways: ctx.gateways,
        agentOrigin: config.http.agentOrigin,
        publicUrl: config.http.publicUrl,
        trust: config.http,
        log: loggers.root.child({ subsystem: 'edge' }),
      });
      edge = proxy;
      // The edge's routes read the database as the migrations leave it: its hosts wait until then.
      void starting.then(
        () => front.serving.serveFront(proxy),
        () => {},
      );
    }
    await starting;
  } catch (error) {
    // Requests waiting for a service that will not come are cut, so the process can end.
    await front?.cut();
    edge?.close();
    if (ctx && context) await context.stopContext(ctx).catch(() => {});
    else await compute.close().catch(() => {});
    throw error;
  }
  const { stopContext } = context;
  const service = ctx;
  // The operator CLI reaches this process through a socket in DATA_DIR while it holds the database.
  const { startAdminSocket } = await import('./admin/admin-socket.js');
  const adminSocket = await startAdminSocket(service);
  const closers = [
    async () => {
      await front?.close();
      edge?.close();
    },
    () => adminSocket.close(),
  ];

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      loggers.root.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    loggers.root.info({ signal }, 'shutting down');
    await Promise.all(closers.map((close) => close()));
    await stopContext(service);
    loggers.root.info('stopped');
  };
  process.on('SIGTERM', (signal) => void stop(signal));
  process.on('SIGINT', (signal) => void stop(signal));
}

/**
 * The HTTP server, listening now in front of a service that does not exist yet: `/healthz`
 * answers, everything else waits for `serving` to hand the app and the edge over. `close` stops
 * it; `cut` ends a start that failed, cutting the requests that wait. Both wait until the server
 * listens: one closed before that would still open its port afterwards.
 */
function listenAtOnce(config: Config, loggers: Loggers, role: Role) {
  const isAgentHost = agentHostMatcher(config.http.agentOrigin.domain, config.http.publicUrl);
  const serving = deferredServing((host) => isAgentHost(host) !== undefined);
  let listened = () => {};
  const listening = new Promise<void>((resolve) => {
    listened = resolve;
  });
  const server = startHttpServer(
    serving.app,
    config.http,
    (info) => {
      loggers.root.info({ port: info.port, publicUrl: config.http.publicUrl, role }, 'listening');
      listened();
    },
    serving.front,
  );
  const close = async () => {
    await listening;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      // Keep-alive connections and proxied WebSockets would hold `close` open until they end.
      server.closeIdleConnections();
    });
  };
  return {
    serving,
    close,
    async cut() {
      await listening;
      serving.cut();
      server.closeAllConnections();
      await close();
    },
  };
}

function parseRole(argv: readonly string[]): Role {
  const arg = argv.find((a) => a.startsWith('--role='))?.slice('--role='.length) ?? 'all';
  if (arg === 'all' || arg === 'api' || arg === 'edge' || arg === 'worker') return arg;
  throw new ConfigError([`--role: expected all, api, edge or worker, got "${arg}"`]);
}

main(process.argv.slice(2), process.env).catch((error: unknown) => {
  // What the operator fixes is said in their words alone; anything else keeps its stack.
  if (error instanceof ConfigError || error instanceof ComputeUnavailable) {
    console.error(error.message);
  } else console.error(error);
  process.exitCode = 1;
});
