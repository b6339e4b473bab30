import { request } from 'node:http';
import type { ErrorEnvelope } from '@svc/contract';
import { loadConfig } from '../config/config.js';
import { resolveSecrets } from '../config/dev-keys.js';
import { createContext, startContext, stopContext } from '../context.js';
import { AppError, toErrorEnvelope } from '../errors.js';
import { createLogger, subsystemLoggers } from '../logger.js';
import { adminSocketPath } from './admin-socket.js';
import { runAdminCommand } from './commands.js';

/** A command's result, or the service's error envelope (the HTTP interface's, `detail` included). */
export type AdminOutcome = { result: unknown } | ErrorEnvelope;

/**
 * Runs an operator command: through the running service's socket when one answers, else in this
 * process on the configured database (PGlite allows one process at a time, hence the socket).
 */
export async function runAdmin(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
  args: Record<string, string>,
): Promise<AdminOutcome> {
  const { config, secrets: raw } = loadConfig(env);
  const viaSocket = await callSocket(adminSocketPath(config.dataDir), name, args);
  if (viaSocket) return viaSocket;
  const loggers = subsystemLoggers(createLogger({ logLevel: 'warn' }));
  const secrets = await resolveSecrets(config, raw, (message) => loggers.root.warn(message));
  const ctx = await createContext(config, secrets, { loggers });
  try {
    await startContext(ctx, { work: false });
    return { result: await runAdminCommand(ctx, name, args) };
  } catch (error) {
    if (error instanceof AppError) return toErrorEnvelope(error);
    throw error;
  } finally {
    await stopContext(ctx);
  }
}

/** The running service's answer, or `undefined` when no service listens on the socket. */
function callSocket(
  socketPath: string,
  name: string,
  args: unknown,
): Promise<AdminOutcome | undefined> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath,
        path: `/commands/${encodeURIComponent(name)}`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as AdminOutcome),
        );
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) =>
      ['ENOENT', 'ECONNREFUSED'].includes(error.code ?? '') ? resolve(undefined) : reject(error),
    );
    req.end(JSON.stringify(args));
  });
}
