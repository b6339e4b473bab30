import { requireAgentCredentials } from '../agent-env.js';
import type { CliCommand } from './index.js';

/** `svc where`: which service this Agent talks to, without revealing the token. */
export const whereCommand: CliCommand = {
  register(program, io) {
    program
      .command('where')
      .description('Show the service URL and Agent id this CLI uses')
      .action(async () => {
        const credentials = await requireAgentCredentials(io.env);
        io.stdout.write(
          `service: ${credentials.apiUrl}\nagent:   ${credentials.agentId ?? '(unknown)'}\n`,
        );
      });
  },
};
