import { request } from 'node:http';
import { Command } from 'commander';
import { ConfigError, loadConfig } from '../config/config.js';
import { resolveSecrets } from '../config/dev-keys.js';
import { createContext, startContext, stopContext } from '../context.js';
import { AppError } from '../errors.js';
import { createLogger, subsystemLoggers } from '../logger.js';
import { adminSocketPath } from './admin-socket.js';
import { adminCommands, runAdminCommand } from './commands.js';

type Outcome = { result: unknown } | { error: string; message: string };

/**
 * `npm run admin -- <command> [--option value]…`. Asks the running service over its socket; when
 * none answers, opens the database itself (PGlite allows one process at a time).
 */
async function main(argv: string[]): Promise<number> {
  const program = new Command('admin').description('Operator commands for the svc control plane');
  let outcome: Outcome | undefined;
  for (const [name, entry] of Object.entries(adminCommands)) {
    const cmd = program.command(name).description(entry.summary);
    const shape = (entry.args as { shape?: Record<string, { description?: string }> }).shape ?? {};
    for (const position of entry.positional ?? []) cmd.argument(`[${position}]`);
    for (const [key, field] of Object.entries(shape)) {
      cmd.option(`--${key} <value>`, field.description ?? key);
    }
    cmd.action(async (...received: unknown[]) => {
      const positional = entry.positional ?? [];
      const options = received[positional.length] as Record<string, string>;
      const args: Record<string, string> = { ...options };
      positional.forEach((key, i) => {
        if (received[i] !== undefined) args[key] = received[i] as string;
      });
      outcome = await run(name, args);
    });
  }
  await program.parseAsync(argv, { from: 'user' });
  if (!outcome) return 0;
  if ('error' in outcome) {
    console.error(`${outcome.error}: ${outcome.message}`);
    return 1;
  }
  console.log(JSON.stringify(outcome.result, null, 2));
  return 0;
}

async function run(name: string, args: Record<string, string>): Promise<Outcome> {
  const { config, secrets: raw } = loadConfig(process.env);
  const viaSocket = await callSocket(adminSocketPath(config.dataDir), name, args);
  if (viaSocket) return viaSocket;
  const loggers = subsystemLoggers(createLogger({ logLevel: 'warn' }));
  const secrets = await resolveSecrets(config, raw, (message) => loggers.root.warn(message));
  const ctx = await createContext(config, secrets, { loggers });
  try {
    await startContext(ctx, { work: false });
    return { result: await runAdminCommand(ctx, name, args) };
  } catch (error) {
    if (error instanceof AppError) return { error: error.code, message: error.message };
    throw error;
  } finally {
    await stopContext(ctx);
  }
}

/** The running service's answer, or `undefined` when no service listens on the socket. */
function callSocket(socketPath: string, name: string, args: unknown): Promise<Outcome | undefined> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath,
        path: `/commands/${name}`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Outcome));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) =>
      ['ENOENT', 'ECONNREFUSED'].includes(error.code ?? '') ? resolve(undefined) : reject(error),
    );
    req.end(JSON.stringify(args));
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof ConfigError ? error.message : error);
    process.exitCode = 1;
  },
);
