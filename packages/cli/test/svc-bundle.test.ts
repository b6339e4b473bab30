import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gatewayKeyFromToken, issueGatewayTicket } from '@svc/contract/gateway-ticket';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

// The one-file build as a machine gets it: built where no node_modules can be found, run
// by a bare Node 24. Each part it must carry is exercised: the bundle itself, the assets built
// ahead, node-pty's binary (a shell in the terminal), and the scanner's thread.

const run = promisify(execFile);
const repo = path.join(import.meta.dirname, '../../..');
const agentId = '3f0b8a4e-6c1d-4e7a-9b2c-1d2e3f4a5b6c';
const token = `svc1.${agentId}.1.${'c'.repeat(43)}`;

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

describe('svc built into one file', () => {
  let dir: string;
  let svc: string;
  let home: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'svc-bundle-'));
    // Built into a folder of its own (the local driver's machines run packages/cli/dist, which
    // must not change under them), outside the repository, so no node_modules can be found.
    const built = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'packages/cli/scripts/build.ts', path.join(dir, 'opt')],
      { cwd: repo, encoding: 'utf8' },
    );
    expect(built.status, built.stderr).toBe(0);
    svc = path.join(dir, 'opt/svc.mjs');
    home = path.join(dir, 'home');
    await mkdir(path.join(home, '.crabglamp'), { recursive: true });
    await writeFile(
      path.join(home, '.crabglamp/agent.env'),
      `SVC_API_URL=http://127.0.0.1:9\nSVC_AGENT_ID=${agentId}\nSVC_HMAC_TOKEN=${token}\n`,
    );
  }, 60_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The copy, run from a folder with no node_modules above it, with only Node's own modules. */
  const svcRun = (args: string[]) =>
    run(process.execPath, [svc, ...args], { cwd: dir, env: { PATH: '/usr/bin:/bin', HOME: home } });

  it('prints its version and help', async () => {
    expect((await svcRun(['--version'])).stdout).toBe('0.1.0\n');
    const help = (await svcRun(['--help'])).stdout;
    for (const command of ['gateway', 'glamp', 'apps', 'onboard']) expect(help).toContain(command);
  });

  it('serves the gateway with the assets built ahead and a shell through node-pty', async () => {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [svc, 'gateway', '--port', String(port), '--host', '127.0.0.1'],
      {
        cwd: dir,
        env: {
          PATH: '/usr/bin:/bin',
          HOME: home,
          SHELL: '/bin/sh',
          SVC_GATEWAY_BUILTIN_EDITOR: 'true',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    children.push(child);
    await new Promise<void>((resolve) => child.stdout?.once('data', () => resolve()));
    const base = `http://127.0.0.1:${port}`;

    const key = gatewayKeyFromToken(token)?.key as Buffer;
    const nowSeconds = Math.floor(Date.now() / 1000);
    const { ticket } = issueGatewayTicket(key, { agentId, gen: 1, nowSeconds });
    const opened = await fetch(`${base}/_svc/open?ticket=${encodeURIComponent(ticket)}`, {
      redirect: 'manual',
    });
    expect(opened.status).toBe(302);
    const cookie = (opened.headers.get('set-cookie') ?? '').split(';')[0] as string;
    expect(cookie).toMatch(/^svc_gateway=/);

    for (const [name, type] of [
      ['terminal.js', 'text/javascript'],
      ['editor.js', 'text/javascript'],
      ['xterm.css', 'text/css'],
    ]) {
      const asset = await fetch(`${base}/_svc/assets/${name}`, { headers: { cookie } });
      expect(asset.status, name).toBe(200);
      expect(asset.headers.get('content-type')).toContain(type);
      expect((await asset.text()).length).toBeGreaterThan(1000);
    }

    const ws = new WebSocket(`ws://127.0.0.1:${port}/_svc/terminal/ws?cols=80&rows=24`, {
      headers: { cookie, origin: base },
    });
    let screen = '';
    ws.on('message', (data) => {
      screen += String(data);
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(JSON.stringify({ t: 'i', d: 'echo "from-$((6 * 7))-pty"\r' }));
    const until = Date.now() + 10_000;
    while (!screen.includes('from-42-pty') && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    ws.close();
    expect(screen).toContain('from-42-pty');
  });

  it("scans a home on the scanner's threads", async () => {
    // The pool's thread is dist/scan-worker.mjs; a module of the copy runs the pool on a file
    // holding a credential the scanner flags.
    const probe = path.join(dir, 'opt/probe.mjs');
    await writeFile(
      probe,
      `import { Worker } from 'node:worker_threads';
const worker = new Worker(new URL('./scan-worker.mjs', import.meta.url));
const bytes = new TextEncoder().encode('AWS_ACCESS_KEY_ID=AKIAQ2RT4U6O7A3D5F7H\\n');
worker.once('message', ({ result }) => { console.log(JSON.stringify(result)); worker.terminate(); });
worker.postMessage({ id: 1, file: 'notes.txt', bytes });
`,
    );
    const { stdout } = await run(process.execPath, [probe], {
      cwd: dir,
      env: { PATH: '/usr/bin:/bin' },
    });
    const flags = JSON.parse(stdout) as { file: string }[];
    expect(flags.length).toBeGreaterThan(0);
    expect(flags[0]?.file).toBe('notes.txt');
  });
});
