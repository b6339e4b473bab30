import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { issuesAt } from '../../api/client.js';
import { changePasswordMutation } from '../../api/queries/accounts.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { PasswordField } from '../../components/PasswordField.js';

export function PasswordForm() {
  const qc = useQueryClient();
  const change = useMutation(changePasswordMutation(qc));
  const [currentPassword, setCurrent] = useState('');
  const [newPassword, setNew] = useState('');
  return (
    <section>
      <h2>Password</h2>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          change.mutate(
            { currentPassword, newPassword },
            {
              onSuccess: () => {
                setCurrent('');
                setNew('');
              },
            },
          );
        }}
      >
        <PasswordField
          label="Current password"
          kind="current-password"
          errors={issuesAt(change.error, 'currentPassword')}
          value={currentPassword}
          onChange={setCurrent}
        />
        <PasswordField
          label="New password"
          kind="new-password"
          hint="Every other browser signed in as you is signed out, and every access token is revoked."
          errors={issuesAt(change.error, 'newPassword')}
          value={newPassword}
          onChange={setNew}
        />
        <button type="submit" className="primary" disabled={change.isPending}>
          {change.isPending ? 'Changing…' : 'Change password'}
        </button>
      </form>
      {change.isSuccess && (
        <p role="status">
          Password changed. {plural(change.data.revokedSessions, 'other session')} ended and{' '}
          {plural(change.data.revokedTokens, 'access token')} revoked.
        </p>
      )}
      <ErrorMessage error={change.error} />
    </section>
  );
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;
