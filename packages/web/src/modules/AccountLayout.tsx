import { useQuery } from '@tanstack/react-query';
import { Link, Navigate, Outlet, useParams } from 'react-router';
import { ApiError } from '../api/client.js';
import { meQuery } from '../api/queries/accounts.js';
import { ErrorMessage } from '../components/ErrorMessage.js';
import { AccountContext, accountPath } from './account-context.js';
import { ShellLoading } from './SignedInLayout.js';

/**
 * An account's pages (`/accounts/{slug}/…`), inside the signed-in frame: they act on the account
 * the URL names, which the user must belong to.
 */
export function AccountLayout() {
  const me = useQuery(meQuery());
  const { slug = '' } = useParams();
  // The frame above waits for the same query and shows its errors.
  if (!me.data) return null;
  const { user, accounts } = me.data;
  const account = accounts.find((a) => a.slug === slug);
  if (!account)
    return (
      <>
        <ErrorMessage error="You are not a member of this account." />
        <Link to="/">Go to your account</Link>
      </>
    );
  return (
    <AccountContext.Provider value={{ user, accounts, account }}>
      <Outlet />
    </AccountContext.Provider>
  );
}

/** `/dashboard/`: the personal account's Agents (or sign-in). */
export function HomeRedirect() {
  const me = useQuery(meQuery());
  if (me.isPending) return <ShellLoading />;
  if (me.isError) {
    if (me.error instanceof ApiError && me.error.status === 401)
      return <Navigate to="/sign-in" replace />;
    return <ErrorMessage error={me.error} title="Could not load your accounts." />;
  }
  const personal = me.data.accounts.find((a) => a.kind === 'personal') ?? me.data.accounts[0];
  if (!personal) return <ErrorMessage error="You belong to no account." />;
  return <Navigate to={accountPath(personal.slug, 'agents')} replace />;
}
