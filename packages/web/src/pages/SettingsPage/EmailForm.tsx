import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { issuesAt } from '../../api/client.js';
import { meQuery, updateMeMutation } from '../../api/queries/accounts.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { Field } from '../../components/Field.js';

/** A new address counts as unverified until the link mailed to it is opened. */
export function EmailForm() {
  const qc = useQueryClient();
  const me = useQuery(meQuery());
  const update = useMutation(updateMeMutation(qc));
  const [email, setEmail] = useState<string>();
  const current = me.data?.user;
  const shown = email ?? current?.email ?? '';
  return (
    <section>
      <h2>E-mail</h2>
      <form
        noValidate
        className="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          update.mutate({ email: shown }, { onSuccess: () => setEmail(undefined) });
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
        <button type="submit" disabled={update.isPending || !current || shown === current.email}>
          {update.isPending ? 'Saving…' : 'Change e-mail'}
        </button>
      </form>
      {update.isSuccess && (
        <p role="status">
          Your e-mail address is now {update.data.email}. We sent a link to it; open it to verify
          the address. Your previous address was told of the change.
        </p>
      )}
      <ErrorMessage error={update.error} />
    </section>
  );
}
