import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { confirmPasswordResetMutation } from '../../api/queries/accounts.js';
import { NewPasswordForm } from '../../components/NewPasswordForm.js';
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
        <NewPasswordForm
          hint="At least 8 characters. Every browser signed in as you is signed out; this one is signed in."
          submitLabel="Set the new password"
          pending={reset.isPending}
          error={reset.error}
          onSubmit={(password) => reset.mutate({ token, password })}
        />
      )}
    </main>
  );
}
