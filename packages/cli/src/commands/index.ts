import type { Command } from 'commander';
import type { CliIo } from '../main.js';
import { appsCommand } from './apps.js';
import { gatewayCommand } from './gateway.js';
import { glampCommand } from './glamp.js';
import { onboardCommand } from './onboard.js';
import { whereCommand } from './where.js';

/** One `svc` command: registers itself (with its `--help`) on the program. */
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
