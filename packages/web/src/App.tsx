import { BrowserRouter, Route, Routes } from 'react-router';
import { AccountLayout, HomeRedirect } from './modules/AccountLayout.js';
import { AdoptPage } from './pages/AdoptPage/AdoptPage.js';
import { AgentLinkPage } from './pages/AgentLinkPage/AgentLinkPage.js';
import { AgentPage } from './pages/AgentPage/AgentPage.js';
import { AgentsPage } from './pages/AgentsPage/AgentsPage.js';
import { AppsPage } from './pages/AppsPage/AppsPage.js';
import { AuditPage } from './pages/AuditPage/AuditPage.js';
import { BillingPage } from './pages/BillingPage/BillingPage.js';
import { BundlesPage } from './pages/BundlesPage/BundlesPage.js';
import { CreateAgentPage } from './pages/CreateAgentPage/CreateAgentPage.js';
import { CreateOrganizationPage } from './pages/CreateOrganizationPage/CreateOrganizationPage.js';
import { CreatePlainVmPage } from './pages/CreatePlainVmPage/CreatePlainVmPage.js';
import { ExplorePage } from './pages/ExplorePage/ExplorePage.js';
import { ForgotPasswordPage } from './pages/ForgotPasswordPage/ForgotPasswordPage.js';
import { InvitationPage } from './pages/InvitationPage/InvitationPage.js';
import { MembersPage } from './pages/MembersPage/MembersPage.js';
import { NotFoundPage } from './pages/NotFoundPage.js';
import { PlainVmPage } from './pages/PlainVmPage/PlainVmPage.js';
import { PlainVmsPage } from './pages/PlainVmsPage/PlainVmsPage.js';
import { ResetPasswordPage } from './pages/ResetPasswordPage/ResetPasswordPage.js';
import { SettingsPage } from './pages/SettingsPage/SettingsPage.js';
import { SignInPage } from './pages/SignInPage/SignInPage.js';
import { SignUpPage } from './pages/SignUpPage/SignUpPage.js';
import { UndoEmailChangePage } from './pages/UndoEmailChangePage/UndoEmailChangePage.js';
import { VaultPage } from './pages/VaultPage/VaultPage.js';
import { VerifyEmailPage } from './pages/VerifyEmailPage/VerifyEmailPage.js';

/** Every dashboard page, under `/dashboard`. Account pages carry the account's slug. */
export function App() {
  return (
    <BrowserRouter basename="/dashboard">
      <Routes>
        <Route index element={<HomeRedirect />} />
        <Route path="sign-in" element={<SignInPage />} />
        <Route path="sign-up" element={<SignUpPage />} />
        <Route path="forgot-password" element={<ForgotPasswordPage />} />
        {/* Mail links open these three, signed in or not (modules/return-to.ts names them). */}
        <Route path="reset-password" element={<ResetPasswordPage />} />
        <Route path="verify-email" element={<VerifyEmailPage />} />
        <Route path="invitation" element={<InvitationPage />} />
        <Route path="undo-email-change" element={<UndoEmailChangePage />} />
        <Route path="new-organization" element={<CreateOrganizationPage />} />
        <Route path="settings" element={<SettingsPage />} />
        <Route path="agents/:id" element={<AgentLinkPage />} />
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
        <Route path="*" element={<NotFoundPage />} />
      </Routes>
    </BrowserRouter>
  );
}
