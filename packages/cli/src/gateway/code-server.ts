import { type ChildProcess, spawn } from 'node:child_process';
import { access, constants, mkdir, rm, writeFile } from 'node:fs/promises';
import { type IncomingMessage, request, type ServerResponse } from 'node:http';
import { createConnection } from 'node:net';
import path from 'node:path';
import type { Duplex } from 'node:stream';

/** Where the gateway mounts code-server when the VM has it. */
export const CODE_SERVER_PREFIX = '/_svc/editor';

/** `code-server` on the VM's PATH (the Agent images install it), if any. */
export async function findCodeServer(env: Readonly<Record<string, string | undefined>>) {
  for (const dir of (env.PATH ?? '').split(':').filter(Boolean)) {
    const candidate = path.join(dir, 'code-server');
    if (
      await access(candidate, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  return undefined;
}

/**
 * code-server, run by the gateway with its own auth off and reachable only through a Unix socket
 * in a directory only the VM's user can enter (no TCP port anyone else on the machine, or a
 * DNS-rebinding web page, could reach). The gateway's ticket and cookie are the only door:
 * requests under `/_svc/editor/` are proxied with the prefix stripped, which code-server supports
 * since it only uses relative URLs.
 */
export class CodeServer {
  #child: ChildProcess | undefined;

  private constructor(readonly socketPath: string) {}

  static async start(bin: string, home: string, env: Readonly<Record<string, string | undefined>>) {
    const dir = path.join(home, '.crabglamp', 'editor');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const socketPath = path.join(dir, 'code-server.sock');
    await rm(socketPath, { force: true });
    await writeDefaultSettings(home);
    const server = new CodeServer(socketPath);
    const args = [
      ...['--socket', socketPath, '--auth', 'none'],
      // Nothing reported to code-server's vendor, no update checks: the image decides its version.
      ...['--disable-telemetry', '--disable-update-check'],
      // The folder is the user's own home: no "do you trust the authors" prompt before editing,
      // and always that folder.
      ...['--disable-workspace-trust', '--ignore-last-opened'],
      // Its port forwarding is refused by the gateway anyway (the user's apps on this origin).
      '--disable-proxy',
      home,
    ];
    server.#child = spawn(bin, args, {
      cwd: home,
      env: { ...env, HOME: home },
      stdio: 'ignore',
    });
    try {
      await waitForSocket(socketPath, 30_000);
    } catch (error) {
      server.stop();
      throw error;
    }
    return server;
  }

  /** Forwards a request under the prefix to code-server, the prefix stripped. */
  proxy(req: IncomingMessage, res: ServerResponse): void {
    const upstream = request(
      {
        socketPath: this.socketPath,
        method: req.method,
        path: stripPrefix(req.url ?? '/'),
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('The editor is not answering.\n');
    });
    req.pipe(upstream);
  }

  /** Forwards a WebSocket upgrade under the prefix, byte for byte after the handshake. */
  proxyUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const upstream = createConnection({ path: this.socketPath }, () => {
      const headers = Object.entries(req.headers)
        .flatMap(([key, value]) => [value ?? []].flat().map((v) => `${key}: ${v}`))
        .join('\r\n');
      upstream.write(`${req.method} ${stripPrefix(req.url ?? '/')} HTTP/1.1\r\n${headers}\r\n\r\n`);
      if (head.length > 0) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    const drop = () => {
      upstream.destroy();
      socket.destroy();
    };
    upstream.on('error', drop);
    socket.on('error', drop);
  }

  stop(): void {
    this.#child?.kill();
  }
}

/**
 * The workbench's settings when the user has none yet: telemetry and update checks off in its
 * own settings too (the flags cover code-server's; these VS Code's), and the files rather than a
 * welcome page or the chat panel on first open. A user's own settings file is never touched.
 */
export const DEFAULT_SETTINGS = {
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'workbench.enableExperiments': false,
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  // The chat panel beside the files halves a phone's screen: open only when asked for.
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
};

async function writeDefaultSettings(home: string): Promise<void> {
  const dir = path.join(home, '.local', 'share', 'code-server', 'User');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(path.join(dir, 'settings.json'), JSON.stringify(DEFAULT_SETTINGS, null, 2), {
    flag: 'wx',
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
}

const stripPrefix = (url: string) => url.slice(CODE_SERVER_PREFIX.length) || '/';

async function waitForSocket(socketPath: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ path: socketPath }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('code-server did not start');
}
