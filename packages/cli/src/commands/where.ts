import { loadAgentCredentials } from '../agent-env.js';
import type { CliCommand } from './index.js';

/** `svc where`: which service this Agent talks to, without revealing the token. */
export const whereCommand: CliCommand = {
  register(program, io, setExitCode) {
    program
      .command('where')
      .description('Show the service URL and Agent id this CLI uses')
      .action(async () => {
        const credentials = await loadAgentCredentials(io.env);
        if (!credentials) {
          io.stderr.write(
            'svc: no credentials: set SVC_API_URL and SVC_HMAC_TOKEN, or run on an Agent (~/.crabglamp/agent.env)\n',
          );
          setExitCode(1);
          return;
        }
        io.stdout.write(
          `service: ${credentials.apiUrl}\nagent:   ${credentials.agentId ?? '(unknown)'}\n`,
        );
      });
  },
};
