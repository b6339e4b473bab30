import { cancelStaging } from '@svc/contract';
import { requireHome } from '../../agent-env.js';
import { ApiError, agentApiClient } from '../../api-client.js';
import { readLocalStaging, removeLocalStaging } from '../../glamp/state.js';
import type { CliIo } from '../../main.js';
import type { CliCommand } from '../index.js';

/** `svc glamp cancel`. */
export const glampCancelCommand: CliCommand = {
  register(glamp, io) {
    glamp
      .command('cancel')
      .description('Delete the staging directory and cancel the staging')
      .action(() => glampCancel(io));
  },
};

/** The staging row is cancelled and the local staging removed. */
async function glampCancel(io: CliIo): Promise<void> {
  const home = requireHome(io.env);
  const api = await agentApiClient(io);
  const state = await readLocalStaging(home);
  if (state) {
    await api(cancelStaging, { params: { id: state.stagingId } }).catch((error: unknown) => {
      // Already cancelled or published on the service: the local files still go.
      const isGone =
        error instanceof ApiError &&
        (error.error === 'not_found' || error.error === 'invalid_state');
      if (!isGone) throw error;
    });
  }
  await removeLocalStaging(home);
  io.stdout.write(state ? `Cancelled staging ${state.stagingId}.\n` : 'Nothing was staged.\n');
}
