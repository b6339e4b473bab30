import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { ApiError } from '../../api/client.js';
import { acceptInvitationMutation, meQuery, signOutMutation } from '../../api/queries/accounts.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { Loading } from '../../components/Loading.js';
import { accountPath } from '../../modules/account-context.js';
import { LinkProblem, linkProblem } from '../../modules/LinkProblem.js';
import { useTitle } from '../../modules/use-title.js';

/**
 * `/invitation?token=…`, from the invitation mail: the signed-in user accepts and lands in the
 * organization. Signed out, it sends to sign-in or sign-up, which both come back here.
 */
export function InvitationPage() {
  useTitle('Invitation');
  const qc = useQueryClient();
  const navigate = useNavigate();
  const token = useSearchParams()[0].get('token') ?? '';
  const me = useQuery(meQuery());
  const base = acceptInvitationMutation(qc);
  const accept = useMutation({
    ...base,
    onSuccess: async (membership) => {
      // The new account must be among the user's before its page opens.
      await base.onSuccess();
      navigate(accountPath(membership.slug));
    },
  });
  const here = `/dashboard/invitation?token=${encodeURIComponent(token)}`;
  const signIn = `/sign-in?next=${encodeURIComponent(here)}`;
  const signOut = useMutation({ ...signOutMutation(), onSuccess: () => navigate(signIn) });
  const problem = linkProblem(token, accept.error);

  let body: React.ReactNode;
  if (problem) {
    body = (
      <LinkProblem problem={problem}>
        Ask the person who invited you to send a new invitation.{' '}
        {me.isSuccess && <Link to="/">Go to the dashboard</Link>}
      </LinkProblem>
    );
  } else if (me.isPending) {
    body = <Loading what="your session" />;
  } else if (me.isError && me.error instanceof ApiError && me.error.status === 401) {
    body = (
      <>
        <p>Sign in or sign up to accept the invitation; you come back here afterwards.</p>
        <p className="actions">
          <Link to={signIn} className="button primary">
            Sign in
          </Link>
          <Link to={`/sign-up?next=${encodeURIComponent(here)}`} className="button">
            Sign up
          </Link>
        </p>
      </>
    );
  } else if (me.isError) {
    body = <ErrorMessage error={me.error} title="Could not check who is signed in." />;
  } else {
    body = (
      <>
        <p>
          You join the organization as {me.data.user.name} ({me.data.user.email}), with the role the
          invitation gives.
        </p>
        <ErrorMessage error={accept.error} />
        <p className="actions">
          <button
            type="button"
            className="primary"
            disabled={accept.isPending || accept.isSuccess}
            onClick={() => accept.mutate(token)}
          >
            {accept.isPending ? 'Accepting…' : 'Accept invitation'}
          </button>
          <button type="button" disabled={signOut.isPending} onClick={() => signOut.mutate()}>
            Not you? Sign out
          </button>
        </p>
        <ErrorMessage error={signOut.error} />
      </>
    );
  }

  return (
    <main className="narrow">
      <h1>Invitation</h1>
      {body}
    </main>
  );
}
