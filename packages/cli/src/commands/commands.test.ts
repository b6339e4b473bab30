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
});
