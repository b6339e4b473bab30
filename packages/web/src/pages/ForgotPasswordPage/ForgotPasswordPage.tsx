import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { issuesAt } from '../../api/client.js';
import { requestPasswordResetMutation } from '../../api/queries/accounts.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { Field } from '../../components/Field.js';
import { useTitle } from '../../modules/use-title.js';

/**
 * Asks for a password reset link. The answer never says whether the address has an account, so
 * the page does not either.
 */
export function ForgotPasswordPage() {
  useTitle('Forgot password');
  const request = useMutation(requestPasswordResetMutation());
  const [email, setEmail] = useState('');

  return (
    <main className="narrow">
      <h1>Forgot your password?</h1>
      {request.isSuccess ? (
        <p role="status">
          If an account has the address {request.variables}, a link to choose a new password is on
          its way to it. The link works once, for an hour.
        </p>
      ) : (
        <form
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            request.mutate(email);
          }}
        >
          <p>Give the e-mail address you sign in with; we send a link to choose a new password.</p>
          <Field label="E-mail" errors={issuesAt(request.error, 'email')}>
            {(control) => (
              <input
                {...control}
                type="email"
                value={email}
                onChange={(e) => setEmail(e.target.value)}
                autoComplete="email"
              />
            )}
          </Field>
          <ErrorMessage error={request.error} />
          <button type="submit" className="primary" disabled={request.isPending}>
            {request.isPending ? 'Sending…' : 'Send the link'}
          </button>
        </form>
      )}
      <p>
        <Link to="/sign-in">Back to sign-in</Link>
      </p>
    </main>
  );
}
