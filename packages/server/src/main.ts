import { ComputeUnavailable } from './adapters/compute/compute-driver.js';
import { composeService } from './composition-root.js';
import { ConfigError, loadConfig } from './config/config.js';
import { secureDataDir } from './config/data-dir.js';
import { resolveSecrets } from './config/dev-keys.js';
import { createLogger, subsystemLoggers, warnLoudly } from './logger.js';

/**
 * What this process does. `all`: the API, the dashboard, the edge (Agents' hosts) and the jobs.
 * `api`: the same without jobs; it keeps the edge, so a deployment of API replicas and workers
 * needs no process of its own for Agents' URLs. `edge`: Agents' hosts only (plus the health
 * checks on any other host), to run the edge apart from the API. `worker`: jobs only, no HTTP.
 */
type Role = 'all' | 'api' | 'edge' | 'worker';

/**
 * Process entry: parse the environment once, secure DATA_DIR, then compose the service
 * (composition-root.ts: the compute driver first, so one that cannot start stops the process
 * before it listens; the HTTP server at once; the rest while /healthz answers), start it, and stop
 * it cleanly on signals. Only what the first steps need is imported up front.
 */
async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  // Before anything writes: what the service creates (the embedded database's files, keys,
  // machines, mail) is its user's alone.
  process.umask(0o077);
  const role = parseRole(argv);
  const { config, secrets: rawSecrets } = loadConfig(env);
  const loggers = subsystemLoggers(createLogger(config));
  // Signals are taken from here on: the HTTP server listens inside `composeService` and /readyz
  // says ready inside `start` (the admin socket comes after), and a signal meanwhile must not
  // meet the default action, which ends the process and resets every connection under way. One
  // that comes while starting stops the service once it has started.
  let service: Awaited<ReturnType<typeof composeService>> | undefined;
  let started = false;
  let stopWhenStarted: string | undefined;
  const stop = async (signal: string) => {
    if (!service) return;
    if (service.ctx.readiness.state === 'stopping') {
      loggers.root.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    loggers.root.info({ signal }, 'shutting down');
    await service.stop();
    loggers.root.info('stopped');
  };
  const onSignal = (signal: string) => {
    if (started) return void stop(signal);
    if (stopWhenStarted !== undefined) {
      loggers.root.warn({ signal }, 'second signal while starting: exiting now');
      process.exit(1);
    }
    loggers.root.info({ signal }, 'signal while starting: stopping once started');
    stopWhenStarted = signal;
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
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
  service = await composeService(config, secrets, {
    parts: { loggers },
    work: role === 'all' || role === 'worker',
    ...(role !== 'worker' && {
      http: { ...(role === 'edge' && { only: 'operations' as const }), logged: { role } },
    }),
    adminSocket: true,
    processMetrics: true,
  });
  try {
    // Migrations, the job queue and the first reconciles run while the app already answers:
    // /readyz "not_ready" until they are done, every other request once they are.
    await service.start();
  } catch (error) {
    await service.stop().catch(() => {});
    throw error;
  }
  started = true;
  // Every role says it once its start-up work is done (a worker has no /readyz to ask).
  loggers.root.info({ role }, 'started');
  if (stopWhenStarted !== undefined) await stop(stopWhenStarted);
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
