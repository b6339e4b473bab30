import type { Config, RawSecrets } from '../config/config.js';
import { secureDataDir } from '../config/data-dir.js';
import { resolveSecrets } from '../config/dev-keys.js';
import { createContext, startContext, stopContext } from '../context.js';
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
  const ctx = await createContext(config, secrets, { loggers });
  try {
    await startContext(ctx, { work: false });
    // What the socket would answer: JSON (dates as ISO strings).
    return { result: JSON.parse(JSON.stringify(await runAdminCommand(ctx, name, args)) ?? 'null') };
  } catch (error) {
    if (error instanceof AppError) return toErrorEnvelope(error);
    throw error;
  } finally {
    await stopContext(ctx);
  }
}
