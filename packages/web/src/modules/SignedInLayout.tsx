import { useQuery } from '@tanstack/react-query';
import { Suspense, useEffect } from 'react';
import { Navigate, Outlet, useLocation, useMatch } from 'react-router';
import { ApiError } from '../api/client.js';
import { meQuery } from '../api/queries/accounts.js';
import { ErrorMessage } from '../components/ErrorMessage.js';
import { PageLoading } from '../components/Loading.js';
import { homeAccount, rememberAccount } from './home-account.js';
import { signInPath } from './return-to.js';
import { SectionsNav } from './SectionsNav.js';
import { StatusAnnouncer } from './StatusAnnouncer.js';
import { TopBar } from './TopBar.js';
import { useFocusOnNavigate } from './use-focus-on-navigate.js';
import { VerifyEmailBanner } from './VerifyEmailBanner.js';

/**
 * The one frame of every signed-in page: the header, the e-mail notice, the sections of the
 * account the page is in (or, on a page outside any account, of the account last opened), and
 * the page. Signed out, it goes to sign-in and comes back after.
 */
export function SignedInLayout() {
  const me = useQuery(meQuery());
  const inAccount = useMatch('/accounts/:slug/*');
  const slug = inAccount?.params.slug;
  const { pathname } = useLocation();
  const mainRef = useFocusOnNavigate();
  const member = me.data?.accounts.some((a) => a.slug === slug);
  useEffect(() => {
    if (slug && member) rememberAccount(slug);
  }, [slug, member]);

  if (me.isPending) return <ShellLoading />;
  if (me.isError) {
    if (me.error instanceof ApiError && me.error.status === 401)
      return <Navigate to={signInPath()} replace />;
    return (
      <main>
        <ErrorMessage error={me.error} title="Could not load your accounts." />
      </main>
    );
  }
  const { user, accounts, emailVerification } = me.data;
  const current = slug ? accounts.find((a) => a.slug === slug) : homeAccount(accounts);
  // The section part of the path, kept when switching accounts.
  const section = (slug && pathname.split('/')[3]) || 'agents';
  return (
    <div className="shell">
      <TopBar user={user} accounts={accounts} current={current} section={section} />
      <VerifyEmailBanner user={user} mode={emailVerification} />
      <StatusAnnouncer />
      {current && <SectionsNav account={current} />}
      <main ref={mainRef} tabIndex={-1}>
        <Suspense fallback={<PageLoading what="the page" />}>
          <Outlet />
        </Suspense>
      </main>
    </div>
  );
}

/** The frame's shape while the user's accounts load: the header's bar, then the page's. */
export function ShellLoading() {
  return (
    <div className="shell">
      <div className="skeleton-bar" />
      <div className="skeleton-bar" />
      <main>
        <PageLoading what="your accounts" />
      </main>
    </div>
  );
}
