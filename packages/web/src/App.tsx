import { type ComponentType, lazy, Suspense } from 'react';
import { BrowserRouter, Route, Routes } from 'react-router';
import { PageLoading } from './components/Loading.js';
import { AccountLayout, HomeRedirect } from './modules/AccountLayout.js';
import { SignedInLayout } from './modules/SignedInLayout.js';

/**
 * A page loaded with its route: each page is its own chunk, fetched the first time it is opened,
 * so the first load carries only the frame.
 */
function page<K extends string>(load: () => Promise<Record<K, ComponentType>>, name: K) {
  return lazy(() => load().then((module) => ({ default: module[name] })));
}

const AdoptPage = page(() => import('./pages/AdoptPage/AdoptPage.js'), 'AdoptPage');
const AgentLinkPage = page(() => import('./pages/AgentLinkPage/AgentLinkPage.js'), 'AgentLinkPage');
const AgentPage = page(() => import('./pages/AgentPage/AgentPage.js'), 'AgentPage');
const AgentPortOpenPage = page(
  () => import('./pages/AgentPortOpenPage/AgentPortOpenPage.js'),
  'AgentPortOpenPage',
);
const AgentsPage = page(() => import('./pages/AgentsPage/AgentsPage.js'), 'AgentsPage');
const AppsPage = page(() => import('./pages/AppsPage/AppsPage.js'), 'AppsPage');
const AuditPage = page(() => import('./pages/AuditPage/AuditPage.js'), 'AuditPage');
const BillingPage = page(() => import('./pages/BillingPage/BillingPage.js'), 'BillingPage');
const BundlesPage = page(() => import('./pages/BundlesPage/BundlesPage.js'), 'BundlesPage');
const CreateAgentPage = page(
  () => import('./pages/CreateAgentPage/CreateAgentPage.js'),
  'CreateAgentPage',
);
const CreateOrganizationPage = page(
  () => import('./pages/CreateOrganizationPage/CreateOrganizationPage.js'),
  'CreateOrganizationPage',
);
const CreatePlainVmPage = page(
  () => import('./pages/CreatePlainVmPage/CreatePlainVmPage.js'),
  'CreatePlainVmPage',
);
const ExplorePage = page(() => import('./pages/ExplorePage/ExplorePage.js'), 'ExplorePage');
const ForgotPasswordPage = page(
  () => import('./pages/ForgotPasswordPage/ForgotPasswordPage.js'),
  'ForgotPasswordPage',
);
const InvitationPage = page(
  () => import('./pages/InvitationPage/InvitationPage.js'),
  'InvitationPage',
);
const MembersPage = page(() => import('./pages/MembersPage/MembersPage.js'), 'MembersPage');
const NotFoundPage = page(() => import('./pages/NotFoundPage.js'), 'NotFoundPage');
const PlainVmPage = page(() => import('./pages/PlainVmPage/PlainVmPage.js'), 'PlainVmPage');
const PlainVmsPage = page(() => import('./pages/PlainVmsPage/PlainVmsPage.js'), 'PlainVmsPage');
const ResetPasswordPage = page(
  () => import('./pages/ResetPasswordPage/ResetPasswordPage.js'),
  'ResetPasswordPage',
);
const SettingsPage = page(() => import('./pages/SettingsPage/SettingsPage.js'), 'SettingsPage');
const SignInPage = page(() => import('./pages/SignInPage/SignInPage.js'), 'SignInPage');
const SignUpPage = page(() => import('./pages/SignUpPage/SignUpPage.js'), 'SignUpPage');
const UndoEmailChangePage = page(
  () => import('./pages/UndoEmailChangePage/UndoEmailChangePage.js'),
  'UndoEmailChangePage',
);
const VaultPage = page(() => import('./pages/VaultPage/VaultPage.js'), 'VaultPage');
const VerifyEmailPage = page(
  () => import('./pages/VerifyEmailPage/VerifyEmailPage.js'),
  'VerifyEmailPage',
);

/**
 * Every dashboard page, under `/dashboard`. Signed-in pages share one frame (SignedInLayout);
 * account pages carry the account's slug.
 */
export function App() {
  return (
    <BrowserRouter basename="/dashboard">
      <Suspense
        fallback={
          <main className="narrow">
            <PageLoading what="the page" />
          </main>
        }
      >
        <Routes>
          <Route index element={<HomeRedirect />} />
          <Route path="sign-in" element={<SignInPage />} />
          <Route path="sign-up" element={<SignUpPage />} />
          <Route path="forgot-password" element={<ForgotPasswordPage />} />
          {/* Mail links open these four, signed in or not (modules/return-to.ts names them). */}
          <Route path="reset-password" element={<ResetPasswordPage />} />
          <Route path="verify-email" element={<VerifyEmailPage />} />
          <Route path="invitation" element={<InvitationPage />} />
          <Route path="undo-email-change" element={<UndoEmailChangePage />} />
          <Route element={<SignedInLayout />}>
            <Route path="new-organization" element={<CreateOrganizationPage />} />
            <Route path="settings" element={<SettingsPage />} />
            <Route path="agents/:id" element={<AgentLinkPage />} />
            <Route path="agents/:id/ports/:port/open" element={<AgentPortOpenPage />} />
            {/* The public bundle pages link here; the account is picked on the page. */}
            <Route path="adopt/:accountSlug/:name" element={<AdoptPage />} />
            <Route path="accounts/:slug" element={<AccountLayout />}>
              <Route index element={<AgentsPage />} />
              <Route path="agents" element={<AgentsPage />} />
              <Route path="agents/new" element={<CreateAgentPage />} />
              <Route path="agents/:id" element={<AgentPage />} />
              <Route path="plain-vms" element={<PlainVmsPage />} />
              <Route path="plain-vms/new" element={<CreatePlainVmPage />} />
              <Route path="plain-vms/:id" element={<PlainVmPage />} />
              <Route path="vault" element={<VaultPage />} />
              <Route path="apps" element={<AppsPage />} />
              <Route path="bundles" element={<BundlesPage />} />
              <Route path="explore" element={<ExplorePage />} />
              <Route path="billing" element={<BillingPage />} />
              <Route path="members" element={<MembersPage />} />
              <Route path="audit" element={<AuditPage />} />
            </Route>
          </Route>
          <Route path="*" element={<NotFoundPage />} />
        </Routes>
      </Suspense>
    </BrowserRouter>
  );
}
