import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command, Help } from 'commander';
import { describe, expect, it } from 'vitest';
import { run } from '../main.js';
import { CLI_VERSION } from '../version.js';
import { commands } from './index.js';

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: {
      env: { HOME: '/nonexistent' },
      stdout: { write: (s: string) => out.push(s) },
      stderr: { write: (s: string) => err.push(s) },
    },
    out: () => out.join(''),
    err: () => err.join(''),
  };
}

/** Every command path (`['apps']`, `['glamp', 'init']`, …), from what the commands register. */
async function commandPaths(): Promise<string[][]> {
  const program = new Command('svc');
  for (const entry of commands) (await entry.load()).register(program, io().io, () => {});
  const paths: string[][] = [];
  const walk = (command: Command, prefix: string[]) => {
    for (const child of command.commands) {
      paths.push([...prefix, child.name()]);
      walk(child, [...prefix, child.name()]);
    }
  };
  walk(program, []);
  return paths;
}

describe('svc commands', () => {
  it('are listed by `svc --help` (which loads none of them) in the words they register', async () => {
    for (const entry of commands) {
      const program = new Command('svc');
      (await entry.load()).register(program, io().io, () => {});
      const command = program.commands.find((c) => c.name() === entry.name) as Command;
      // `run` gives every command `--version`, which the list counts among its options.
      command.version(CLI_VERSION);
      expect(new Help().subcommandTerm(command)).toBe(`${entry.name} ${entry.usage}`.trim());
      expect(command.description()).toBe(entry.description);
    }
  });

  it('each answers --help and --version', async () => {
    const paths = await commandPaths();
    expect(paths).toContainEqual(['glamp', 'init']);
    for (const path of paths) {
      const help = io();
      expect(await run([...path, '--help'], help.io), path.join(' ')).toBe(0);
      expect(help.out()).toMatch(new RegExp(`^Usage: svc ${path.join(' ')}`));
      expect(help.out()).toContain('-V, --version');
      const version = io();
      expect(await run([...path, '--version'], version.io), path.join(' ')).toBe(0);
      expect(version.out()).toBe(`${CLI_VERSION}\n`);
    }
  });

  it('`svc help <command>` explains that command', async () => {
    const t = io();
    expect(await run(['help', 'onboard'], t.io)).toBe(0);
    expect(t.out()).toMatch(/^Usage: svc onboard/);
    expect(t.out()).toContain('--force');
  });

  it('a mistyped command or option says where the usage is', async () => {
    const t = io();
    expect(await run(['apps', '--jsn'], t.io)).toBe(1);
    expect(t.err()).toBe(
      "error: unknown option '--jsn'\n(Did you mean --json?)\n(add --help for usage)\n",
    );
  });

  it('the gateway names the address it cannot listen on, and what to do', async () => {
    const home = await mkdtemp(path.join(tmpdir(), 'svc-gateway-'));
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as { port: number }).port;
      const env = { HOME: home, SVC_GATEWAY_BUILTIN_EDITOR: 'true' };
      const busy = io();
      const args = ['gateway', '--host', '127.0.0.1', '--port', String(port)];
      expect(await run(args, { ...busy.io, env })).toBe(1);
      expect(busy.err()).toMatch(
        new RegExp(
          `^svc: the gateway cannot listen on 127\\.0\\.0\\.1:${port}: listen EADDRINUSE.*another svc gateway\\?\\); stop it or pass --port\n$`,
        ),
      );
      const wrong = io();
      expect(await run(['gateway', '--port', 'eighty'], { ...wrong.io, env })).toBe(1);
      expect(wrong.err()).toMatch(/port must be a number from 0 to 65535 .* not "eighty"/);
    } finally {
      taken.close();
      await rm(home, { recursive: true, force: true });
    }
  });
});
