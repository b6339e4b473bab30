import { existsSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import type { ErrorEnvelope } from '@svc/contract';
import { loadConfig } from '../config/config.js';
import { adminSocketPath } from './socket-path.js';

/** A command's result, or the service's error envelope (the HTTP interface's, `detail` included). */
export type AdminOutcome = { result: unknown } | ErrorEnvelope;

/** The CLI found no service data where it looked, and will not make a fresh database there. */
export class NoDataDirError extends Error {
  override name = 'NoDataDirError';
}

/**
 * Runs an operator command: through the running service's socket when one answers, else in this
 * process on the configured database (PGlite allows one process at a time, hence the socket).
 * Without `DATA_DIR` and without `./data` it refuses: the service keeps its data elsewhere, and
 * opening a fresh database here would answer about nothing (or create users nobody sees).
 */
export async function runAdmin(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
  args: Record<string, string>,
): Promise<AdminOutcome> {
  const { config, secrets: raw } = loadConfig(env);
  const dataDir = path.resolve(config.dataDir);
  if (!env.DATA_DIR && !existsSync(dataDir)) {
    throw new NoDataDirError(
      `No service data at ${dataDir}: DATA_DIR is not set and that directory does not exist.\n` +
        "Set DATA_DIR to the service's data directory (the DATA_DIR it runs with), e.g.\n" +
        `  DATA_DIR=/path/to/data npm run admin -- ${name}\n` +
        'or start the service first (npm start creates ./data).',
    );
  }
  const viaSocket = await callSocket(adminSocketPath(config.dataDir), name, args);
  if (viaSocket) return viaSocket;
  const { runInProcess } = await import('./admin-local.js');
  return runInProcess(config, raw, name, args);
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
