import { composeService } from '../composition-root.js';
import type { Config, RawSecrets } from '../config/config.js';
import { secureDataDir } from '../config/data-dir.js';
import { resolveSecrets } from '../config/dev-keys.js';
import { AppError, toErrorEnvelope } from '../errors.js';
import { createLogger, subsystemLoggers } from '../logger.js';
import type { AdminOutcome } from './admin-client.js';
import { runAdminCommand } from './commands.js';

/**
 * Runs a command in this process on the configured database, when no service answers on the
 * socket. Loaded only then: it brings the whole service's code with it.
 */
export async function runInProcess(
  config: Config,
  raw: RawSecrets,
  name: string,
  args: Record<string, string>,
): Promise<AdminOutcome> {
  // As the service does (main.ts): the database this opens stays its user's alone.
  process.umask(0o077);
  const loggers = subsystemLoggers(createLogger({ logLevel: 'warn' }, process.stderr));
  const { tightened } = await secureDataDir(config.dataDir);
  if (tightened > 0) {
    loggers.root.warn({ dataDir: config.dataDir, tightened }, 'DATA_DIR made owner-only');
  }
  const secrets = await resolveSecrets(config, raw, (message) => loggers.root.warn(message));
  // The service as the process builds it, on its database, running no jobs and listening nowhere,
  // and leaving the host's firewall table to the service (writing it would need root).
  const service = await composeService(config, secrets, {
    parts: { loggers },
    work: false,
    hostGuard: false,
  });
  try {
    await service.start();
    // What the socket would answer: JSON (dates as ISO strings).
    const result = await runAdminCommand(service.ctx, name, args);
    return { result: JSON.parse(JSON.stringify(result) ?? 'null') };
  } catch (error) {
    if (error instanceof AppError) return toErrorEnvelope(error);
    throw error;
  } finally {
    await service.stop();
  }
}
