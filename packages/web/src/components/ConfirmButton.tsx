import { useEffect, useRef, useState } from 'react';

/** A button that asks once more before acting: the second, explicit button does it. */
export function ConfirmButton(props: {
  label: string;
  /** What a screen reader announces, when the visible label needs its context (which bundle). */
  accessibleLabel?: string;
  confirmLabel: string;
  question: string;
  pending?: boolean;
  /** Not possible now; `describedBy` names the element that says why. */
  disabled?: boolean;
  describedBy?: string;
  onConfirm: () => void;
}) {
  const [asking, setAsking] = useState(false);
  const confirm = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);
  if (!asking)
    return (
      <button
        type="button"
        className="danger"
        aria-label={props.accessibleLabel}
        disabled={props.disabled}
        aria-describedby={props.disabled ? props.describedBy : undefined}
        onClick={() => setAsking(true)}
      >
        {props.label}
      </button>
    );
  return (
    <span className="confirm">
      <span>{props.question}</span>
      <button
        ref={confirm}
        type="button"
        className="danger"
        disabled={props.pending || props.disabled}
        onClick={() => {
          props.onConfirm();
          setAsking(false);
        }}
      >
        {props.confirmLabel}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
