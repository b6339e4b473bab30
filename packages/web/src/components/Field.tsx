import { type ReactNode, useId } from 'react';

export interface FieldControlProps {
  id: string;
  'aria-invalid': boolean;
  'aria-describedby'?: string;
}

/**
 * A labelled form control with its hint and its validation messages, wired for screen readers.
 * While it shows a message the hint steps aside (it usually says the same rule: one message per
 * error).
 */
export function Field(props: {
  label: string;
  errors?: readonly string[];
  hint?: ReactNode;
  children: (control: FieldControlProps) => ReactNode;
}) {
  const id = useId();
  const errors = props.errors ?? [];
  const hint = errors.length ? undefined : props.hint;
  const describedBy = [hint ? `${id}-hint` : '', errors.length ? `${id}-errors` : '']
    .filter(Boolean)
    .join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      {props.children({
        id,
        'aria-invalid': errors.length > 0,
        ...(describedBy && { 'aria-describedby': describedBy }),
      })}
      {hint && (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {errors.length > 0 && (
        <ul className="field-errors" id={`${id}-errors`}>
          {errors.map((message) => (
            <li key={message}>{message}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
