import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { issuesAt } from '../../api/client.js';
import { confirmPasswordResetMutation } from '../../api/queries/accounts.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { Field } from '../../components/Field.js';
import { LinkProblem, linkProblem } from '../../modules/LinkProblem.js';
import { useTitle } from '../../modules/use-title.js';

/**
 * `/reset-password?token=…`, from the reset mail: a new password, then the dashboard, signed in
 * (every other session of the user has ended).
 */
export function ResetPasswordPage() {
  useTitle('Choose a new password');
  const qc = useQueryClient();
  const navigate = useNavigate();
  const token = useSearchParams()[0].get('token') ?? '';
  const [password, setPassword] = useState('');
  const base = confirmPasswordResetMutation(qc);
  const reset = useMutation({
    ...base,
    onSuccess: async () => {
      await base.onSuccess();
      navigate('/');
    },
  });
  const problem = linkProblem(token, reset.error);

  return (
    <main className="narrow">
      <h1>Choose a new password</h1>
      {problem ? (
        <LinkProblem problem={problem}>
          <Link to="/forgot-password">Ask for a new link</Link>
        </LinkProblem>
      ) : (
        <form
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            reset.mutate({ token, password });
          }}
        >
          <Field
            label="New password"
            hint="At least 8 characters. Every browser signed in as you is signed out; this one is signed in."
            errors={issuesAt(reset.error, 'password')}
          >
            {(control) => (
              <input
                {...control}
                type="password"
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                autoComplete="new-password"
              />
            )}
          </Field>
          <ErrorMessage error={reset.error} />
          <button type="submit" className="primary" disabled={reset.isPending}>
            {reset.isPending ? 'Saving…' : 'Set the new password'}
          </button>
        </form>
      )}
    </main>
  );
}
