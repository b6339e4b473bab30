import { useMutation, useQuery } from '@tanstack/react-query';
import { Link, Navigate, NavLink, Outlet, useLocation, useNavigate, useParams } from 'react-router';
import { ApiError } from '../api/client.js';
import { meQuery, signOutMutation } from '../api/queries/accounts.js';
import { ErrorMessage } from '../components/ErrorMessage.js';
import { Loading } from '../components/Loading.js';
import { AccountContext, accountLabel, accountPath, canManage } from './account-context.js';
import { signInPath } from './return-to.js';
import { StatusAnnouncer } from './StatusAnnouncer.js';
import { useFocusOnNavigate } from './use-focus-on-navigate.js';
import { VerifyEmailBanner } from './VerifyEmailBanner.js';

const SECTIONS = [
  ['agents', 'Agents'],
  ['plain-vms', 'Plain VMs'],
  ['vault', 'Vault'],
  ['apps', 'Apps'],
  ['bundles', 'Bundles'],
  ['explore', 'Explore'],
  ['billing', 'Billing'],
  ['members', 'Members'],
  ['audit', 'Audit log'],
] as const;

/** The signed-in frame: header with the account switcher, the account's sections, the page. */
export function AccountLayout() {
  const me = useQuery(meQuery());
  const { slug = '' } = useParams();
  const location = useLocation();
  const navigate = useNavigate();
  const mainRef = useFocusOnNavigate();
  const signOut = useMutation({
    ...signOutMutation(),
    onSuccess: () => navigate('/sign-in'),
  });

  if (me.isPending) return <Loading what="your accounts" />;
  if (me.isError) {
    if (me.error instanceof ApiError && me.error.status === 401)
      return <Navigate to={signInPath()} replace />;
    return <ErrorMessage error={me.error} title="Could not load your accounts." />;
  }
  const { user, accounts, emailVerification } = me.data;
  const account = accounts.find((a) => a.slug === slug);
  // The section part of the path, kept when switching accounts.
  const section = location.pathname.split('/')[3] ?? 'agents';
  const switchTo = (next: string) =>
    navigate(accountPath(next, section === 'members' ? 'agents' : section));

  return (
    <div className="shell">
      <header className="topbar">
        <Link to="/" className="brand">
          svc
        </Link>
        <label className="switcher">
          <span className="visually-hidden">Account</span>
          <select value={slug} onChange={(e) => switchTo(e.target.value)} aria-label="Account">
            {accounts.map((a) => (
              <option key={a.id} value={a.slug}>
                {accountLabel(a)}
              </option>
            ))}
          </select>
        </label>
        <Link to="/new-organization">New organization</Link>
        <Link to="/settings" className="user" title="Settings">
          {user.email}
        </Link>
        <button type="button" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
          Sign out
        </button>
      </header>
      <VerifyEmailBanner user={user} mode={emailVerification} />
      <StatusAnnouncer />
      {account ? (
        <AccountContext.Provider value={{ user, accounts, account }}>
          <nav className="sections" aria-label="Sections">
            {SECTIONS.filter(
              ([key]) =>
                (key !== 'members' || account.kind === 'organization') &&
                (key !== 'audit' || canManage(account)),
            ).map(([key, label]) => (
              <NavLink key={key} to={accountPath(account.slug, key)}>
                {label}
              </NavLink>
            ))}
          </nav>
          <main ref={mainRef} tabIndex={-1}>
            <ErrorMessage error={signOut.error} />
            <Outlet />
          </main>
        </AccountContext.Provider>
      ) : (
        <main>
          <ErrorMessage error="You are not a member of this account." />
          <Link to="/">Go to your account</Link>
        </main>
      )}
    </div>
  );
}

/** `/dashboard/`: the personal account's Agents (or sign-in). */
export function HomeRedirect() {
  const me = useQuery(meQuery());
  if (me.isPending) return <Loading what="your accounts" />;
  if (me.isError) {
    if (me.error instanceof ApiError && me.error.status === 401)
      return <Navigate to="/sign-in" replace />;
    return <ErrorMessage error={me.error} title="Could not load your accounts." />;
  }
  const personal = me.data.accounts.find((a) => a.kind === 'personal') ?? me.data.accounts[0];
  if (!personal) return <ErrorMessage error="You belong to no account." />;
  return <Navigate to={accountPath(personal.slug, 'agents')} replace />;
}
