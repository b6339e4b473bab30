import type { Role } from './accounts.js';

/**
 * Who may call an endpoint (docs/roles.md):
 * - `owner`, `admin`, `member`: the least role in the account the endpoint acts on (the account
 *   its path names, its `accountId`, or the account of the resource it names; without any, the
 *   caller's personal account, where they are the only member, an `owner`). Not a member → 404
 *   `not_found`, a member below the role → 403 `forbidden`.
 * - `self`: any signed-in user, on their own user (profile, password, sessions, tokens).
 * - `user`: any signed-in user, on nothing that belongs to an account they are not in (a
 *   catalogue, a new organization, an invitation whose link they hold).
 * - `agent`: an Agent's HMAC token only, for its own account.
 * - `public`: no credential (the request carries its own proof, or the answer is public).
 */
export type Access = Role | 'self' | 'user' | 'agent' | 'public';

export interface EndpointAccess {
  readonly access: Access;
  /** Organizations only: on a personal account the endpoint answers 404 `not_found`. */
  readonly organizationOnly?: true;
  /** What one role cannot say: a finer rule, or who else may call. */
  readonly note?: string;
}

/** Roles from the most to the least rights. */
export const ROLE_ORDER: readonly Role[] = ['owner', 'admin', 'member'];

/** Whether `role` is `least` or above it. */
export const roleAtLeast = (role: Role, least: Role) =>
  ROLE_ORDER.indexOf(role) <= ROLE_ORDER.indexOf(least);

const publicAccess = { access: 'public' } as const;
const self = { access: 'self' } as const;
const agent = { access: 'agent' } as const;
const member = { access: 'member' } as const;
const admin = { access: 'admin' } as const;
const orgMember = { access: 'member', organizationOnly: true } as const;
const orgAdmin = { access: 'admin', organizationOnly: true } as const;

const INTO_ACCOUNT = 'in `accountId`, by default the caller’s personal account';
const LISTED = 'of `accountId`; without it, of every account the caller belongs to';
const TRANSFER = 'and a member (any role) of the target organization (not a member of it: 403)';

/**
 * The rights of each role, one entry per endpoint id of `allEndpoints` (a test checks both: that
 * every endpoint has an entry, and that the service answers each role as the entry says).
 */
export const ENDPOINT_ACCESS: Readonly<Record<string, EndpointAccess>> = {
  // operations
  healthz: publicAccess,
  readyz: publicAccess,
  openapi: publicAccess,
  metrics: publicAccess,

  // sign-up, sign-in, the signed-in user
  signUp: publicAccess,
  signIn: publicAccess,
  signOut: { access: 'public', note: 'ends the session its cookie names, if any' },
  getMe: self,
  updateMe: {
    access: 'self',
    note: 'a new e-mail needs the current password and takes effect once its link is opened',
  },
  deleteMe: {
    access: 'self',
    note: 'refused (409) while the user is the only owner of an organization, or their personal account still holds machines, app connections or bundles',
  },
  changePassword: {
    access: 'self',
    note: 'needs the current password; ends the other sessions and revokes the personal access tokens',
  },
  listSessions: self,
  endSession: self,
  getNoticePreferences: self,
  updateNoticePreferences: self,
  verifyEmail: { access: 'public', note: 'the link’s token is the proof' },
  resendVerification: self,
  requestPasswordReset: publicAccess,
  confirmPasswordReset: { access: 'public', note: 'the link’s token is the proof' },
  undoEmailChange: {
    access: 'public',
    note: 'the token of the link mailed to the previous address is the proof',
  },
  createApiToken: self,
  listApiTokens: self,
  revokeApiToken: self,

  // organizations and their members
  createOrg: { access: 'user', note: 'the caller becomes its owner' },
  listMembers: orgMember,
  addMember: {
    ...orgAdmin,
    note: 'an invitation, like `POST /api/orgs/{id}/invitations`; only owners invite an owner',
  },
  changeMemberRole: {
    ...orgAdmin,
    note: 'only owners change a role to or from `owner`; the last owner keeps it (409 `last_owner`)',
  },
  removeMember: {
    ...orgAdmin,
    note: 'only owners remove an owner; every member may remove themselves (leave); the last owner stays (409 `last_owner`)',
  },
  createInvitation: { ...orgAdmin, note: 'only owners invite an owner' },
  listInvitations: orgAdmin,
  revokeInvitation: orgAdmin,
  acceptInvitation: {
    access: 'user',
    note: 'the invitation link’s token is the proof; the caller’s verified e-mail must be the invited one; the caller joins with its role',
  },
  listAuditEvents: admin,

  // billing
  activateSubscription: admin,
  deactivateSubscription: admin,
  listSlots: member,
  deleteSlot: admin,
  getUsage: member,
  getPrices: publicAccess,
  getUpcomingInvoice: admin,
  listInvoices: admin,
  getInvoice: admin,
  getInvoicePage: admin,
  stripeWebhook: {
    access: 'public',
    note: 'signed by Stripe; 404 unless `BILLING_PROVIDER=stripe`',
  },

  // Agents
  getSelfAgent: agent,
  reportAgentActivity: agent,
  createAgent: { access: 'member', note: INTO_ACCOUNT },
  listAgents: { access: 'member', note: LISTED },
  getAgent: member,
  updateAgent: member,
  startAgent: member,
  stopAgent: member,
  restartAgent: member,
  deleteAgent: member,
  cloneAgent: {
    access: 'member',
    note: 'into another account (`accountId`): admin of the source’s account and a member of the target',
  },
  transferAgent: { access: 'admin', note: TRANSFER },
  setAgentBilling: member,
  resizeAgent: member,
  listAgentSnapshots: member,
  createAgentSnapshot: member,
  deleteAgentSnapshot: member,
  restoreAgentSnapshot: member,
  openAgentGateway: member,
  listAgentPorts: member,
  shareAgentPort: member,
  unshareAgentPort: member,
  openAgentPort: { access: 'member', note: 'a `private` port: owners and admins only' },

  // Plain VMs
  createPlainVm: {
    access: 'member',
    note: `${INTO_ACCOUNT}; its Vault keys must be the account’s`,
  },
  listOsImages: { access: 'user' },
  listPlainVms: { access: 'member', note: LISTED },
  getPlainVm: member,
  startPlainVm: member,
  stopPlainVm: member,
  restartPlainVm: member,
  deletePlainVm: member,
  setPlainVmBilling: member,
  resizePlainVm: member,
  updatePlainVm: member,
  listPlainVmSnapshots: member,
  createPlainVmSnapshot: member,
  deletePlainVmSnapshot: member,
  restorePlainVmSnapshot: member,
  transferPlainVm: { access: 'admin', note: TRANSFER },
  getPlainVmFirewall: member,
  putPlainVmFirewall: member,

  // Vault
  addVaultEntry: { access: 'member', note: INTO_ACCOUNT },
  listVaultEntries: { access: 'member', note: LISTED },
  deleteVaultEntry: member,

  // app connections
  listAppProviders: { access: 'user', note: 'or any Agent' },
  authorizeApp: {
    access: 'member',
    note: `${INTO_ACCOUNT}; the callback saves the connection only if the caller is still a member`,
  },
  appCallback: {
    access: 'public',
    note: 'the state, and the cookie the authorize step set in the same browser, are the proof',
  },
  appCallbackScript: publicAccess,
  listAppConnections: { access: 'member', note: `${LISTED}; or an Agent, for its own account` },
  getConnectionToken: { access: 'member', note: 'or an Agent of the connection’s account' },
  deleteAppConnection: member,

  // bundles
  searchBundles: publicAccess,
  createStaging: agent,
  cancelStaging: { access: 'agent', note: 'the Agent’s own staging' },
  getGlampStatus: agent,
  listAccountBundles: member,
  publishBundle: {
    access: 'agent',
    note: 'into the Agent’s account: a new bundle or one of its own',
  },
  completePublish: { access: 'agent', note: 'the Agent’s own staging' },
  getBundle: publicAccess,
  deleteBundle: { access: 'admin', note: 'of the bundle’s account' },
  deleteBundleVersion: { access: 'admin', note: 'of the bundle’s account' },
  uploadObject: { access: 'public', note: 'the upload ticket in the URL is the proof' },

  // public bundle pages
  explorePage: publicAccess,
  accountPage: publicAccess,
  bundlePage: publicAccess,
  bundleVersionPage: publicAccess,
  bundleFilePage: publicAccess,
  bundleDownload: publicAccess,

  // the dashboard's files and the CLI's download
  dashboardRoot: publicAccess,
  dashboardEntry: publicAccess,
  dashboardFile: publicAccess,
  svcDownload: publicAccess,
};
