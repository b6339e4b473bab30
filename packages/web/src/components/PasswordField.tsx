import type { ReactNode } from 'react';
import { Field } from './Field.js';

/** A password input in its field: the current one (to confirm a change) or a new one. */
export function PasswordField(props: {
  label: string;
  hint?: ReactNode;
  errors?: readonly string[];
  kind: 'current-password' | 'new-password';
  value: string;
  onChange: (value: string) => void;
}) {
  return (
    <Field label={props.label} hint={props.hint} errors={props.errors}>
      {(control) => (
        <input
          {...control}
          type="password"
          autoComplete={props.kind}
          value={props.value}
          onChange={(e) => props.onChange(e.target.value)}
        />
      )}
    </Field>
  );
}
