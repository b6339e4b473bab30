import { type ReactNode, useState } from 'react';
import { issuesAt } from '../api/client.js';
import { ErrorMessage } from './ErrorMessage.js';
import { PasswordField } from './PasswordField.js';

/**
 * The form of a page opened from a mailed link that sets a new password (a reset, taking the
 * account back): one field, the service's answer, one button.
 */
export function NewPasswordForm(props: {
  hint: string;
  submitLabel: string;
  pending: boolean;
  error: unknown;
  onSubmit: (password: string) => void;
  children?: ReactNode;
}) {
  const [password, setPassword] = useState('');
  return (
    <form
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        props.onSubmit(password);
      }}
    >
      {props.children}
      <PasswordField
        label="New password"
        kind="new-password"
        hint={props.hint}
        errors={issuesAt(props.error, 'password')}
        value={password}
        onChange={setPassword}
      />
      <ErrorMessage error={props.error} />
      <button type="submit" className="primary" disabled={props.pending}>
        {props.pending ? 'Saving…' : props.submitLabel}
      </button>
    </form>
  );
}
