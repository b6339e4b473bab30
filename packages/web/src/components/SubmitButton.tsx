import { type ReactNode, useId } from 'react';

/**
 * A form's submit button, disabled while its request runs and, when the form cannot be sent now,
 * with the reason beside it (never enabled only to fail).
 */
export function SubmitButton(props: {
  label: string;
  busyLabel: string;
  pending: boolean;
  /** Why it cannot be sent now; the button is disabled while there is one. */
  unavailable?: ReactNode;
  primary?: boolean;
}) {
  const reasonId = useId();
  return (
    <p className="actions">
      <button
        type="submit"
        className={props.primary === false ? undefined : 'primary'}
        disabled={props.pending || Boolean(props.unavailable)}
        aria-describedby={props.unavailable ? reasonId : undefined}
      >
        {props.pending ? props.busyLabel : props.label}
      </button>
      {props.unavailable && (
        <span className="hint" id={reasonId} data-testid="submit-reason">
          {props.unavailable}
        </span>
      )}
    </p>
  );
}
