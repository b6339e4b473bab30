import type { Role } from '@svc/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { issuesAt } from '../../api/client.js';
import { createInvitationMutation } from '../../api/queries/accounts.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { Field } from '../../components/Field.js';

/** Invites an address, with or without an account yet; the link in the mail works for 7 days. */
export function InviteForm(props: { orgId: string; roles: readonly Role[] }) {
  const qc = useQueryClient();
  const invite = useMutation(createInvitationMutation(qc, props.orgId));
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  return (
    <section>
      <h2>Invite by e-mail</h2>
      <form
        noValidate
        className="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          invite.mutate({ email, role }, { onSuccess: () => setEmail('') });
        }}
      >
        <Field label="E-mail to invite" errors={issuesAt(invite.error, 'email')}>
          {(control) => (
            <input
              {...control}
              type="email"
              autoComplete="off"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
            />
          )}
        </Field>
        <Field label="Role when they join" errors={issuesAt(invite.error, 'role')}>
          {(control) => (
            <select {...control} value={role} onChange={(e) => setRole(e.target.value as Role)}>
              {props.roles.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button type="submit" className="primary" disabled={invite.isPending}>
          {invite.isPending ? 'Inviting…' : 'Invite'}
        </button>
      </form>
      {invite.isSuccess && (
        <p role="status">
          Invitation sent to {invite.data.email}. The link in it works for 7 days; they sign up
          first if they have no account.
        </p>
      )}
      <ErrorMessage error={invite.error} />
    </section>
  );
}
