import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate, useSearchParams } from 'react-router';
import { undoEmailChangeMutation } from '../../api/queries/accounts.js';
import { NewPasswordForm } from '../../components/NewPasswordForm.js';
import { LinkProblem, linkProblem } from '../../modules/LinkProblem.js';
import { useTitle } from '../../modules/use-title.js';

/**
 * `/undo-email-change?token=…`, from the notice to the previous address: the account keeps (or
 * gets back) that address with a new password; everyone else is signed out.
 */
export function UndoEmailChangePage() {
  useTitle('Take your account back');
  const qc = useQueryClient();
  const navigate = useNavigate();
  const token = useSearchParams()[0].get('token') ?? '';
  const base = undoEmailChangeMutation(qc);
  const undo = useMutation({
    ...base,
    onSuccess: async () => {
      await base.onSuccess();
      navigate('/settings');
    },
  });
  const problem = linkProblem(token, undo.error);

  return (
    <main className="narrow">
      <h1>Take your account back</h1>
      {problem ? (
        <LinkProblem problem={problem}>
          Sign in, or ask the service's operator for help if you cannot.
        </LinkProblem>
      ) : (
        <NewPasswordForm
          hint="At least 8 characters. Whoever changed the address knew the old one."
          submitLabel="Take the account back"
          pending={undo.isPending}
          error={undo.error}
          onSubmit={(password) => undo.mutate({ token, password })}
        >
          <p>
            The account keeps this address (or gets it back), every browser signed in as you is
            signed out, every access token is revoked, and this browser is signed in with the new
            password.
          </p>
        </NewPasswordForm>
      )}
    </main>
  );
}
