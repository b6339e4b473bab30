import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { issuesAt } from '../../api/client.js';
import { meQuery, updateMeMutation } from '../../api/queries/accounts.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { Field } from '../../components/Field.js';
import { PasswordField } from '../../components/PasswordField.js';

/**
 * A new address needs the current password and takes effect only once the link mailed to it is
 * opened; until then the current one signs in and gets the mail.
 */
export function EmailForm() {
  const qc = useQueryClient();
  const me = useQuery(meQuery());
  const update = useMutation(updateMeMutation(qc));
  const [email, setEmail] = useState<string>();
  const [currentPassword, setCurrentPassword] = useState('');
  const current = me.data?.user;
  const pending = me.data?.pendingEmailChange;
  const shown = email ?? current?.email ?? '';
  const asked = update.data?.pendingEmailChange;
  return (
    <section>
      <h2>E-mail</h2>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          update.mutate(
            { email: shown, currentPassword },
            {
              onSuccess: () => {
                setEmail(undefined);
                setCurrentPassword('');
              },
            },
          );
        }}
      >
        <Field
          label="E-mail address"
          hint={
            current &&
            (current.emailVerified ? 'Verified.' : 'Not verified yet: open the link we sent to it.')
          }
          errors={issuesAt(update.error, 'email')}
        >
          {(control) => (
            <input
              {...control}
              type="email"
              autoComplete="email"
              value={shown}
              onChange={(e) => setEmail(e.target.value)}
            />
          )}
        </Field>
        <PasswordField
          label="Password"
          kind="current-password"
          hint="Your current password: a new address needs it."
          errors={issuesAt(update.error, 'currentPassword')}
          value={currentPassword}
          onChange={setCurrentPassword}
        />
        <button type="submit" disabled={update.isPending || !current || shown === current.email}>
          {update.isPending ? 'Saving…' : 'Change e-mail'}
        </button>
      </form>
      {update.isSuccess && asked ? (
        <p role="status">
          We sent a link to {asked.email}. Your address changes once you open it; until then you
          sign in with {update.data.email}, which was told of the request.
        </p>
      ) : (
        pending && (
          <p role="status">
            Waiting for {pending.email} to be confirmed: open the link we sent to it (until{' '}
            {new Date(pending.expiresAt).toLocaleString()}).
          </p>
        )
      )}
      <ErrorMessage error={update.error} />
    </section>
  );
}
