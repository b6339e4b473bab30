import type { Command } from 'commander';
import type { CliIo } from '../main.js';

/**
 * One `svc` command (or one subcommand of a group such as `glamp`): registers itself, with its
 * `--help`, on the program or the group. Failures are thrown and printed by `run`;
 * `setExitCode` is for a command that ends normally but must say no (a refused publish).
 */
export interface CliCommand {
  register(program: Command, io: CliIo, setExitCode: (code: number) => void): void;
}

/**
 * A top-level command as `svc --help` lists it, and how to load it: only the command that runs
 * is loaded (the gateway, the scanner, tar and the contract's schemas are most of `svc`), so the
 * list and `--version` print without them. `commands.test.ts` checks these words against what
 * each command registers.
 */
export interface CommandEntry {
  readonly name: string;
  /** What follows the name in the list: `[options]` and the arguments. */
  readonly usage: string;
  readonly description: string;
  readonly load: () => Promise<CliCommand>;
}

/** Every command, in the order `svc` lists them. */
export const commands: readonly CommandEntry[] = [
  {
    name: 'apps',
    usage: '[options] [action] [provider]',
    description: 'Connected apps: the configured providers, list, <provider> or refresh <provider>',
    load: async () => (await import('./apps.js')).appsCommand,
  },
  {
    name: 'gateway',
    usage: '[options]',
    description: "Serve this Agent's editor and terminal to its account's members",
    load: async () => (await import('./gateway.js')).gatewayCommand,
  },
  {
    name: 'glamp',
    usage: '[options]',
    description: 'Package this home as a bundle and publish it',
    load: async () => (await import('./glamp.js')).glampCommand,
  },
  {
    name: 'onboard',
    usage: '[options]',
    description: "Install the svc agent skill and seed ~/TOOLS.md (keeps the user's edits)",
    load: async () => (await import('./onboard.js')).onboardCommand,
  },
  {
    name: 'where',
    usage: '[options]',
    description: 'Show the service URL and Agent id this CLI uses',
    load: async () => (await import('./where.js')).whereCommand,
  },
];
