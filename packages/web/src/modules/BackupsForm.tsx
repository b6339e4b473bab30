import { BACKUPS_KEEP_MAX, type Backups, type BackupsSettings } from '@svc/contract';
import { useId, useState } from 'react';
import { issuesAt } from '../api/client.js';
import { ErrorMessage } from '../components/ErrorMessage.js';
import { Field } from '../components/Field.js';
import { SubmitButton } from '../components/SubmitButton.js';
import type { MachineKind } from './unavailable.js';

const hour = (hourUtc: number) => `${String(hourUtc).padStart(2, '0')}:00 UTC`;

/**
 * Daily backups on or off and how many are kept, saved together. What is set now is said above
 * the form, with the hour the service takes them at (chosen per machine, so they spread).
 */
export function BackupsForm(props: {
  kind: MachineKind;
  backups: Backups;
  pending: boolean;
  saved: boolean;
  error: unknown;
  onSave: (settings: BackupsSettings) => void;
}) {
  const { backups } = props;
  const [enabled, setEnabled] = useState(backups.enabled);
  const [keep, setKeep] = useState(String(backups.keep));
  const enabledId = useId();
  return (
    <form
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        // Sent as typed (empty is NaN): the service names the rule it breaks.
        props.onSave({ enabled, keep: Number(keep.trim() || Number.NaN) });
      }}
    >
      <p data-testid="backups-now">
        {backups.enabled
          ? `A backup of the ${props.kind} is taken daily at about ${hour(backups.hourUtc)}, named backup-YYYY-MM-DD; the newest ${backups.keep} are kept.`
          : `No daily backups of the ${props.kind} are taken.`}
      </p>
      <p>
        <input
          id={enabledId}
          type="checkbox"
          checked={enabled}
          onChange={(event) => setEnabled(event.target.checked)}
        />{' '}
        <label htmlFor={enabledId}>Take a daily backup</label>
      </p>
      <Field
        label="Backups kept"
        hint={`From 1 to ${BACKUPS_KEEP_MAX}: the oldest beyond these are deleted.`}
        errors={issuesAt(props.error, 'backups', 'keep')}
      >
        {(control) => (
          <input
            {...control}
            inputMode="numeric"
            value={keep}
            onChange={(event) => setKeep(event.target.value)}
          />
        )}
      </Field>
      <SubmitButton
        label="Save backups"
        busyLabel="Saving…"
        pending={props.pending}
        primary={false}
      />
      {props.saved && !props.pending && <p role="status">Saved.</p>}
      <ErrorMessage error={props.error} />
    </form>
  );
}
