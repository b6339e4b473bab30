import type { Config, RawSecrets } from '../config/config.js';
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
  const loggers = subsystemLoggers(createLogger({ logLevel: 'warn' }, process.stderr));
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
