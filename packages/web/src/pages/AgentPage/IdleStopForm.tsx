import type { Agent } from '@svc/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { issuesAt } from '../../api/client.js';
import { updateAgentMutation } from '../../api/queries/agents.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { SubmitButton } from '../../components/SubmitButton.js';
import { IdleStopField, idleStopMinutesOf } from '../../modules/IdleStopField.js';

/** What the Agent's idle stop is now, and a form to change it (in any state). */
export function IdleStopForm({ agent }: { agent: Agent }) {
  const qc = useQueryClient();
  const [text, setText] = useState(String(agent.idleStopMinutes));
  const update = useMutation(updateAgentMutation(qc, agent.id));
  return (
    <form
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        // Empty is no number at all: sent as NaN, the server names the field's rule.
        update.mutate({ idleStopMinutes: idleStopMinutesOf(text) ?? Number.NaN });
      }}
    >
      <p>
        {agent.idleStopMinutes === 0
          ? 'It runs until someone stops it.'
          : `The service stops it after ${agent.idleStopMinutes} minutes without anyone using it.`}
      </p>
      <IdleStopField
        value={text}
        onChange={setText}
        errors={issuesAt(update.error, 'idleStopMinutes')}
      />
      <SubmitButton label="Save" busyLabel="Saving…" pending={update.isPending} primary={false} />
      {update.isSuccess && !update.isPending && <p role="status">Saved.</p>}
      <ErrorMessage error={update.error} />
    </form>
  );
}

/** Said beside a stopped Agent's status when the service, not a person, stopped it. */
export function StoppedReasonNote({ agent }: { agent: Agent }) {
  if (agent.stoppedReason !== 'idle') return null;
  return (
    <p className="hint" role="status">
      Stopped by the service because nobody used it for its idle-stop time. Start it to use it
      again.
    </p>
  );
}
