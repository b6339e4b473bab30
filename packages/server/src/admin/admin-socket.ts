import { chmod, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import type { AppContext } from '../context.js';
import { AppError, toErrorEnvelope } from '../errors.js';
import { runAdminCommand } from './commands.js';
import { adminSocketPath } from './socket-path.js';

const isAnswering = (socketPath: string) =>
  new Promise<boolean>((resolve) => {
    const probe = connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });

/**
 * Serves the operator's commands on a Unix socket in DATA_DIR, mode 600: only the account that
 * runs the service (or root) can connect. `POST /commands/<name>` with the arguments as JSON.
 */
export async function startAdminSocket(ctx: AppContext): Promise<{ close(): Promise<void> }> {
  const socketPath = adminSocketPath(ctx.config.dataDir);
  const app = new Hono();
  app.post('/commands/:name', async (c) => {
    const name = c.req.param('name');
    try {
      const result = await runAdminCommand(ctx, name, await c.req.json());
      ctx.log.admin.info({ command: name }, 'admin command');
      return c.json({ result });
    } catch (error) {
      if (error instanceof AppError) return c.json(toErrorEnvelope(error), error.status as 400);
      ctx.log.admin.error({ err: error, command: name }, 'admin command failed');
      return c.json(toErrorEnvelope(new AppError('internal_error')), 500);
    }
  });
  // Another live process (e.g. an api and a worker sharing DATA_DIR on PostgreSQL) answers
  // already; a socket file left by a process that died would make listen fail.
  if (await isAnswering(socketPath)) {
    ctx.log.admin.info({ socketPath }, 'another process serves the admin socket');
    return { close: async () => {} };
  }
  await rm(socketPath, { force: true });
  const server = createAdaptorServer({ fetch: app.fetch });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  await chmod(socketPath, 0o600);
  return {
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        void rm(socketPath, { force: true });
      }),
  };
}
