import { requireAgentCredentials } from '../agent-env.js';
import type { CliCommand } from './index.js';

/** `svc where`: which service this Agent talks to, without revealing the token. */
export const whereCommand: CliCommand = {
  register(program, io) {
    program
      .command('where')
      .description('Show the service URL and Agent id this CLI uses')
      .option('--json', 'print them as JSON')
      .action(async (options: { json?: boolean }) => {
        const credentials = await requireAgentCredentials(io.env);
        if (options.json) {
          const { apiUrl, agentId } = credentials;
          io.stdout.write(`${JSON.stringify({ service: apiUrl, agentId: agentId ?? null })}\n`);
          return;
        }
        io.stdout.write(
          `service: ${credentials.apiUrl}\nagent:   ${credentials.agentId ?? '(unknown)'}\n`,
        );
      });
  },
};
