import { loadAgentCredentials } from '../agent-env.js';
import { createApiClient } from '../glamp/api.js';
import { glampCancel, glampConfirm } from '../glamp/glamp-confirm.js';
import { glampInit } from '../glamp/glamp-init.js';
import { glampRescan, glampStage, glampStatus } from '../glamp/glamp-stage.js';
import type { CliIo } from '../main.js';
import type { CliCommand } from './index.js';

/** `svc glamp …`: package this Agent's home as a bundle and publish it. */
export const glampCommand: CliCommand = {
  register(program, io, setExitCode) {
    const home = () => {
      if (!io.env.HOME) throw new Error('HOME is not set');
      return io.env.HOME;
    };
    const api = async () => {
      const credentials = await loadAgentCredentials(io.env);
      if (!credentials) {
        throw new Error(
          'no credentials: set SVC_API_URL and SVC_HMAC_TOKEN, or run on an Agent (~/.crabglamp/agent.env)',
        );
      }
      return createApiClient(credentials);
    };
    /** Errors become one readable message and exit code 1, never a stack trace. */
    const action =
      <A extends unknown[]>(fn: (...args: A) => Promise<number | undefined>) =>
      async (...args: A) => {
        try {
          setExitCode((await fn(...args)) ?? 0);
        } catch (error) {
          io.stderr.write(`svc: ${error instanceof Error ? error.message : String(error)}\n`);
          setExitCode(1);
        }
      };

    const glamp = program
      .command('glamp')
      .description('Package this home as a bundle and publish it');
    glamp
      .command('init')
      .description('Write a starter bundle.json (asks for what the flags do not give)')
      .option('--name <name>', 'kebab-case, at most 50 characters')
      .option('--display-name <text>', 'shown on the public page')
      .option('--description <text>', 'one sentence')
      .option('--tags <list>', 'comma-separated, kebab-case')
      .option('--force', 'overwrite an existing bundle.json')
      .action(
        action(async (options) => {
          await glampInit(io as CliIo, home(), options);
          return 0;
        }),
      );
    glamp
      .command('stage')
      .description('Scan, build ~/.crabglamp/glamp-staging/ and its tarball, record the report')
      .action(
        action(async () => {
          await glampStage(io, home(), await api());
          return 0;
        }),
      );
    glamp
      .command('rescan')
      .description('Scan the staging directory again without rebuilding it')
      .action(action(async () => glampRescan(io, home())));
    glamp
      .command('confirm')
      .description('Final scan, upload and publish; prints the public URL')
      .option(
        '--accept-flags',
        'publish what the scanner flagged without asking (needed without a terminal)',
      )
      .action(
        action(async (options: { acceptFlags?: boolean }) =>
          glampConfirm(io, home(), await api(), options),
        ),
      );
    glamp
      .command('cancel')
      .description('Delete the staging directory and cancel the staging')
      .action(
        action(async () => {
          await glampCancel(io, home(), await api());
          return 0;
        }),
      );
    glamp
      .command('status')
      .description("Show the open staging or this account's published bundles")
      .action(
        action(async () => {
          await glampStatus(io, await api());
          return 0;
        }),
      );
  },
};
