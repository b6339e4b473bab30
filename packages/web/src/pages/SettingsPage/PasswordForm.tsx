import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { issuesAt } from '../../api/client.js';
import { changePasswordMutation } from '../../api/queries/accounts.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { Field } from '../../components/Field.js';

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
        <Field label="Current password" errors={issuesAt(change.error, 'currentPassword')}>
          {(control) => (
            <input
              {...control}
              type="password"
              autoComplete="current-password"
              value={currentPassword}
              onChange={(e) => setCurrent(e.target.value)}
            />
          )}
        </Field>
        <Field
          label="New password"
          hint="Every other browser signed in as you is signed out."
          errors={issuesAt(change.error, 'newPassword')}
        >
          {(control) => (
            <input
              {...control}
              type="password"
              autoComplete="new-password"
              value={newPassword}
              onChange={(e) => setNew(e.target.value)}
            />
          )}
        </Field>
        <button type="submit" className="primary" disabled={change.isPending}>
          {change.isPending ? 'Changing…' : 'Change password'}
        </button>
      </form>
      {change.isSuccess && <p role="status">Password changed; other sessions ended.</p>}
      <ErrorMessage error={change.error} />
    </section>
  );
}
