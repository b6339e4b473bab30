import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { Link, useSearchParams } from 'react-router';
import { verifyEmailMutation } from '../../api/queries/accounts.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { LinkProblem, linkProblem } from '../../modules/LinkProblem.js';
import { useTitle } from '../../modules/use-title.js';

/**
 * `/verify-email?token=…`, from the verification mail: verifies on opening, signed in or not.
 * The link works once, so it is sent once per page, even when React runs the effect twice.
 */
export function VerifyEmailPage() {
  useTitle('Verify your e-mail address');
  const qc = useQueryClient();
  const token = useSearchParams()[0].get('token') ?? '';
  const verify = useMutation(verifyEmailMutation(qc));
  const sent = useRef(false);
  const { mutate } = verify;
  useEffect(() => {
    if (sent.current || !token) return;
    sent.current = true;
    mutate(token);
  }, [mutate, token]);
  const problem = linkProblem(token, verify.error);

  return (
    <main className="narrow">
      <h1>Verify your e-mail address</h1>
      {problem ? (
        <LinkProblem problem={problem}>
          Signed in, the dashboard sends a new link from the notice at the top of its pages.{' '}
          <Link to="/">Go to the dashboard</Link>
        </LinkProblem>
      ) : verify.isSuccess ? (
        <>
          <p role="status">Your e-mail address {verify.data.email} is verified. Thank you.</p>
          <p>
            <Link to="/">Go to the dashboard</Link>
          </p>
        </>
      ) : verify.isError ? (
        <div>
          <ErrorMessage error={verify.error} title="Could not verify the address." />
          <button type="button" onClick={() => mutate(token)}>
            Try again
          </button>
        </div>
      ) : (
        <p className="loading" role="status">
          Checking the link…
        </p>
      )}
    </main>
  );
}
