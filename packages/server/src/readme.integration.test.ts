import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../test/wait.js';
import { LocalComputeDriver } from './adapters/compute/local-compute-driver.js';
import { createLogger } from './logger.js';

const ROOT = path.join(import.meta.dirname, '../../..');
const README = path.join(ROOT, 'README.md');

/**
 * A `sh` block of the README and how this test treats it, from an HTML comment on the line
 * before it: `<!-- README test: not run (why) -->` leaves it out, saying why;
 * `<!-- README test: in the Agent's home -->` runs it as the Agent's terminal would (HOME is the
 * Agent's home, `svc` on PATH); any other block runs as written in one shell session, in order.
 */
interface ShellBlock {
  readonly line: number;
  readonly code: string;
  readonly mode: { run: 'shell' | 'agent' } | { notRun: string };
}

function shellBlocks(markdown: string): ShellBlock[] {
  const lines = markdown.split('\n');
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```sh') continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`README.md:${i + 1}: a sh block that never ends`);
    const marker = /^<!-- README test: (.*) -->$/.exec(lines[i - 1] ?? '')?.[1];
    const notRun = marker && /^not run \((.+)\)$/.exec(marker)?.[1];
    if (marker && !notRun && marker !== "in the Agent's home") {
      throw new Error(`README.md:${i}: unknown README test marker "${marker}"`);
    }
    blocks.push({
      line: i + 1,
      code: lines.slice(i + 1, end).join('\n'),
      mode: notRun ? { notRun } : { run: marker ? 'agent' : 'shell' },
    });
    i = end;
  }
  return blocks;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/**
 * The README's commands, run as a newcomer would: the service started with `npm start` on a port
 * of its own, then every shell block in order in one bash session (curl failing on any HTTP
 * error, `set -e`), the Agent's blocks in the Agent's home.
 */
describe('the README', () => {
  let work: string;
  let dataDir: string;
  let service: ChildProcess | undefined;
  let port: number;
  let serviceLog = '';

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'svc-readme-'));
    dataDir = path.join(work, 'data');
    port = await freePort();
    service = spawn('npm', ['start'], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, NODE_ENV: 'development' },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    service.stdout?.on('data', (chunk) => {
      serviceLog += chunk;
    });
    service.stderr?.on('data', (chunk) => {
      serviceLog += chunk;
    });
    await waitFor(
      async () => (await fetch(`http://localhost:${port}/readyz`).catch(() => undefined))?.ok,
      120_000,
      'the service started with npm start',
    ).catch((error) => {
      throw new Error(`${error.message}\n${serviceLog.slice(-4000)}`);
    });
  }, 150_000);

  afterAll(async () => {
    if (service?.pid) {
      try {
        process.kill(-service.pid, 'SIGTERM');
      } catch {}
    }
    // Machines of the local driver outlive the service, as VMs would: remove them.
    const driver = new LocalComputeDriver(
      path.join(dataDir, 'machines'),
      createLogger({ logLevel: 'silent' }),
    );
    for (const server of await driver.listServers({}).catch(() => [])) {
      await driver.deleteServer(server.id).catch(() => {});
    }
    await rm(work, { recursive: true, force: true });
    await rm(path.join(ROOT, 'jar'), { force: true });
  }, 60_000);

  it('says why of each sh block it does not run, and runs all the others without an error', async () => {
    const blocks = shellBlocks(await readFile(README, 'utf8'));
    const notRun = blocks.flatMap((b) =>
      'notRun' in b.mode ? [`${b.line}: ${b.mode.notRun}`] : [],
    );
    console.log(`README blocks not run:\n  ${notRun.join('\n  ')}`);
    const run = blocks.filter((b) => 'run' in b.mode);
    expect(run.length).toBeGreaterThan(notRun.length);

    // A newcomer's home: an SSH key (a prerequisite the README names) and `svc` only where an
    // Agent's terminal has it.
    const home = path.join(work, 'home');
    await mkdir(path.join(home, '.ssh'), { recursive: true });
    execFileSync('ssh-keygen', [
      '-q',
      '-t',
      'ed25519',
      '-N',
      '',
      '-f',
      path.join(home, '.ssh/id_ed25519'),
    ]);
    const agentBin = path.join(work, 'agent-bin');
    await mkdir(agentBin);
    await symlink(path.join(ROOT, 'packages/cli/bin/svc.js'), path.join(agentBin, 'svc'));

    const script = [
      'set -euo pipefail',
      // An HTTP error fails the command, unless the command asks for the status itself.
      'curl() { if [[ " $* " == *" -w "* ]]; then command curl "$@"; else command curl --fail-with-body "$@"; fi; }',
      ...run.map((block) =>
        [
          // On a line of its own: the block before may end without a newline (curl's JSON).
          `printf '\\n::README.md:${block.line}\\n'`,
          'mode' in block && 'run' in block.mode && block.mode.run === 'agent'
            ? `(export HOME="$DATA_DIR/machines/$AGENT/home" PATH="${agentBin}:$PATH"; cd "$HOME"\n${block.code}\n)`
            : `{\n${block.code}\n}`,
        ].join('\n'),
      ),
      "printf '\\n::done\\n'",
    ].join('\n');
    await writeFile(path.join(work, 'readme.sh'), script);
    const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
      // In the repository's root, as the README says (its cookie jar lands there: removed after).
      const child = spawn('bash', [path.join(work, 'readme.sh')], {
        cwd: ROOT,
        env: { ...process.env, HOME: home, PORT: String(port), DATA_DIR: dataDir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk) => {
        output += chunk;
      });
      child.stderr.on('data', (chunk) => {
        output += chunk;
      });
      child.on('close', (code) => resolve({ code, output }));
    });
    // What the README printed, to read after a run (CI keeps .tmp/).
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    await writeFile(path.join(ROOT, '.tmp/readme-output.txt'), result.output);
    const lastBlock = [...result.output.matchAll(/^::(README\.md:\d+)$/gm)].at(-1)?.[1];
    expect(
      result.code,
      `the README failed in the block at ${lastBlock}:\n${result.output.slice(-6000)}\n--- service log ---\n${serviceLog.slice(-3000)}`,
    ).toBe(0);
    expect(result.output).toContain('::done');
    // Every block ran, in order.
    expect([...result.output.matchAll(/^::README\.md:(\d+)$/gm)].map((m) => Number(m[1]))).toEqual(
      run.map((b) => b.line),
    );
  }, 600_000);
});
