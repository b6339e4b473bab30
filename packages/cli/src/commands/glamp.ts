import { glampCancelCommand } from './glamp/cancel.js';
import { glampConfirmCommand } from './glamp/confirm.js';
import { glampInitCommand } from './glamp/init.js';
import { glampRescanCommand } from './glamp/rescan.js';
import { glampStageCommand } from './glamp/stage.js';
import { glampStatusCommand } from './glamp/status.js';
import type { CliCommand } from './index.js';

/** The subcommands, in the order of a publish; each registers itself on `svc glamp`. */
const subcommands: readonly CliCommand[] = [
  glampInitCommand,
  glampStageCommand,
  glampRescanCommand,
  glampConfirmCommand,
  glampCancelCommand,
  glampStatusCommand,
];

/** `svc glamp …`: package this Agent's home as a bundle and publish it. */
export const glampCommand: CliCommand = {
  register(program, io, setExitCode) {
    const glamp = program
      .command('glamp')
      .description('Package this home as a bundle and publish it');
    for (const subcommand of subcommands) subcommand.register(glamp, io, setExitCode);
  },
};
