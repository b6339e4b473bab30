import type { Command } from 'commander';
import type { CliIo } from '../main.js';
import { appsCommand } from './apps.js';
import { gatewayCommand } from './gateway.js';
import { glampCommand } from './glamp.js';
import { onboardCommand } from './onboard.js';
import { whereCommand } from './where.js';

/**
 * One `svc` command (or one subcommand of a group such as `glamp`): registers itself, with its
 * `--help`, on the program or the group. Failures are thrown and printed by `run`;
 * `setExitCode` is for a command that ends normally but must say no (a refused publish).
 */
export interface CliCommand {
  register(program: Command, io: CliIo, setExitCode: (code: number) => void): void;
}

/** Every command, in the order `svc` lists them. */
export const commands: readonly CliCommand[] = [
  appsCommand,
  gatewayCommand,
  glampCommand,
  onboardCommand,
  whereCommand,
];
