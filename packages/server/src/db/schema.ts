// The database's tables as Kysely sees them, one interface per table in migration order: kept in
// one file (over 400 lines) because it is one map, read beside the migrations, not a use case.
import type {
  AdoptedFrom,
  AppProvider,
  BillingType,
  BundleCredential,
  BundleFile,
  BundleManifest,
  Cohort,
  ConnectionStatus,
  DiskOperation,
  FirewallRule,
  InvoiceLine,
  InvoiceStatus,
  MachineState,
  NoticeKind,
  OsImageKey,
  PortShare,
  Product,
  Region,
  Size,
  SnapshotKind,
  SnapshotStatus,
  SshKeyType,
  StagingReport,
  StagingState,
  StoppedReason,
  SubscriptionStatus,
} from '@svc/contract';

import type { ColumnType, Generated, GeneratedAlways, Insertable, Selectable } from 'kysely';

/**
 * Row types of every table, in camelCase (Kysely's CamelCasePlugin maps them to the snake_case
 * columns the migrations create). Migrations never import this file.
 */

type CreatedAt = ColumnType<Date, Date | undefined, never>;
type UpdatedAt = ColumnType<Date, Date | undefined, Date>;

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  passwordHash: string;
  /** When `email` was last proven to reach the user; null until then. */
  emailVerifiedAt: Date | null;
  /**
   * A requested new address, the SHA-256 of the link mailed to it and when that link expires;
   * all null while no change waits. `email` becomes `pendingEmail` only through the link.
   */
  pendingEmail: Generated<string | null>;
  pendingEmailTokenHash: Generated<string | null>;
  pendingEmailExpiresAt: Generated<Date | null>;
  createdAt: CreatedAt;
  updatedAt: UpdatedAt;
}

/** A link sent by e-mail (verification, password reset): the hash of its secret, single use. */
export interface EmailLinksTable {
  tokenHash: string;
  purpose: 'verify_email' | 'reset_password' | 'undo_email_change';
  userId: string;
  email: string;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

/** A pending invitation to an organization; accepted and revoked ones are deleted. */
export interface InvitationsTable {
  id: string;
  accountId: string;
  email: string;
  role: 'owner' | 'admin' | 'member';
  tokenHash: string;
  invitedBy: string | null;
  createdAt: Date;
  expiresAt: Date;
}

/** A personal access token: `tokenHash` is the SHA-256 of `svcp_…`. */
export interface ApiTokensTable {
  id: string;
  userId: string;
  name: string;
  scope: 'read' | 'write';
  tokenHash: string;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
}

export interface AccountsTable {
  id: string;
  slug: string;
  kind: 'personal' | 'organization';
  name: string;
  subscriptionStatus: Generated<SubscriptionStatus>;
  /** Derived by the database: `subscriptionStatus` is `active` or `past_due`. */
  subscriptionActive: GeneratedAlways<boolean>;
  createdAt: CreatedAt;
  updatedAt: UpdatedAt;
}

export interface AccountMembersTable {
  accountId: string;
  userId: string;
  role: 'owner' | 'admin' | 'member';
  createdAt: CreatedAt;
}

export interface SessionsTable {
  /** SHA-256 of the cookie value: a database leak does not hand out sessions. */
  idHash: string;
  /** What the settings page calls it (never the cookie or its hash). */
  id: Generated<string>;
  userId: string;
  userAgent: string | null;
  clientAddress: string | null;
  createdAt: CreatedAt;
  lastSeenAt: Date | null;
  expiresAt: Date;
}

/** One attempt counter (`util/attempt-backoff.ts`): its current streak. */
export interface RateLimitsTable {
  key: string;
  lastAttemptAt: Date;
  attempts: number;
}

export interface AgentsTable {
  id: string;
  accountId: string;
  name: string;
  subdomain: string;
  size: Size;
  region: Region;
  billingType: BillingType;
  state: MachineState;
  statusReason: string | null;
  provider: string;
  cohort: Generated<Cohort>;
  tokenGen: Generated<number>;
  provisionDeadlineAt: Date | null;
  /** The subscription slot this Agent occupies (subscription billing only). */
  slotId: string | null;
  /** On a clone source while its disk is copied: the clone's id. */
  cloningBy: string | null;
  cloneSourceId: string | null;
  /** Adopted: the bundle version its home starts from, until that version is deleted. */
  adoptedVersionId: ColumnType<string | null, string | null | undefined, string | null>;
  adoptedFrom: ColumnType<AdoptedFrom | null, string | null | undefined, string | null>;
  /** The adopter's credential values, sealed, until provisioning ends. */
  adoptionCredentials: ColumnType<string | null, string | null | undefined, string | null>;
  /** Credential keys of the bundle the adopter left unset. */
  credentialsToSet: ColumnType<string[], string | undefined, string>;
  /** Minutes unused after which the service stops it while running; 0: never. */
  idleStopMinutes: Generated<number>;
  /** The last time a person used it through the edge (written at most every few seconds). */
  lastActivityAt: Date | null;
  /** `idle` while stopped by the service for idleness; `null` when a person stopped it. */
  stoppedReason: StoppedReason | null;
  /** A snapshot being taken or restored: lifecycle moves and other disk operations wait. */
  diskOperation: Generated<DiskOperation>;
  /** When `diskOperation` began (null without one): the reconciler gives up one left too long. */
  diskOperationAt: Date | null;
  backupsEnabled: Generated<boolean>;
  backupsKeep: Generated<number>;
  /** The hour (UTC) of its daily backup, drawn at random when the row is made. */
  backupsHour: Generated<number>;
  createdAt: CreatedAt;
  updatedAt: UpdatedAt;
}

export interface SubscriptionSlotsTable {
  id: string;
  accountId: string;
  product: 'agent' | 'plain_vm';
  size: Size;
  region: Region;
  createdAt: CreatedAt;
  /** Set when removed on the billing page: kept, since slots are charged by the second held. */
  removedAt: Date | null;
}

export interface UsagePeriodsTable {
  id: string;
  seq: Generated<string>;
  resourceKind: 'agent' | 'plain_vm';
  resourceId: string;
  accountId: string;
  state: string;
  billingType: BillingType;
  size: Size;
  region: Region;
  cohort: Generated<Cohort>;
  startedAt: Date;
  endedAt: Date | null;
}

export interface InvoiceCounterTable {
  id: boolean;
  lastNumber: number;
  /** The end of the latest month closed for every account; null before the first close. */
  closedThrough: Date | null;
}

export interface InvoicesTable {
  number: number;
  accountId: string;
  periodStart: Date;
  periodEnd: Date;
  currency: string;
  minorUnitDigits: number;
  /** bigint: read as a string, `Number()` it (amounts stay far below 2^53). */
  total: ColumnType<string, number, never>;
  status: InvoiceStatus;
  issuedAt: Date;
  dueAt: Date;
  paidAt: Date | null;
  providerInvoiceId: string | null;
}

export interface InvoiceLinesTable {
  invoiceNumber: number;
  position: number;
  kind: InvoiceLine['kind'];
  description: string;
  product: Product;
  size: Size;
  region: Region;
  resourceId: string | null;
  rate: InvoiceLine['rate'];
  quantity: number;
  seconds: ColumnType<string, number, never>;
  unitAmount: ColumnType<string, number, never>;
  amount: ColumnType<string, number, never>;
}

export interface BillingCustomersTable {
  accountId: string;
  provider: string;
  customerId: string;
  subscriptionId: string | null;
  /** When the newest processor event applied to the subscription's standing happened. */
  statusEventAt: Date | null;
  createdAt: Date;
}

/** One process at a time makes an account's processor subscription follow it (0017). */
export interface BillingLeasesTable {
  accountId: string;
  holder: string;
  heldUntil: Date;
}

export interface BillingEventsTable {
  id: string;
  type: string;
  occurredAt: Date;
  receivedAt: Date;
}

export interface AuditEventsTable {
  id: string;
  accountId: string;
  actorUserId: string | null;
  /** The actor's address and name when the event was written; null without an actor. */
  actorEmail: string | null;
  actorName: string | null;
  action: string;
  resourceKind: string;
  resourceId: string;
  data: ColumnType<Record<string, unknown>, string | undefined, string>;
  createdAt: Date;
}

export interface VaultEntriesTable {
  id: string;
  accountId: string;
  label: string;
  type: SshKeyType;
  publicKey: string;
  fingerprintSha256: string;
  createdAt: CreatedAt;
}

/** JSON columns: read as values, written as JSON text. */
type Json<T> = ColumnType<T, string, string>;
/** A bigint column: the drivers return text, we write numbers. */
type BigInt = ColumnType<string | number, number, number>;

export interface PlainVmsTable {
  id: string;
  accountId: string;
  name: string;
  /** The API's `tier`. */
  size: Size;
  region: Region;
  osImageKey: OsImageKey;
  billingType: BillingType;
  state: MachineState;
  statusReason: string | null;
  provider: string;
  passwordEnabled: boolean;
  passwordHash: string | null;
  vaultEntryIds: Json<string[]>;
  authorizedKeys: Json<string[]>;
  firewallRules: Json<FirewallRule[]>;
  /** While set and in the future, a firewall change at the provider is under way. */
  firewallLeaseUntil: Generated<Date | null>;
  ipv4: string | null;
  ipv6: string | null;
  sshHost: string | null;
  sshPort: number | null;
  slotId: string | null;
  provisionDeadlineAt: Date | null;
  /** A snapshot being taken or restored: lifecycle moves and other disk operations wait. */
  diskOperation: Generated<DiskOperation>;
  /** When `diskOperation` began (null without one): the reconciler gives up one left too long. */
  diskOperationAt: Date | null;
  backupsEnabled: Generated<boolean>;
  backupsKeep: Generated<number>;
  /** The hour (UTC) of its daily backup, drawn at random when the row is made. */
  backupsHour: Generated<number>;
  createdAt: CreatedAt;
  updatedAt: UpdatedAt;
}

export interface AppAuthorizationStatesTable {
  stateHash: string;
  userId: string;
  accountId: string;
  provider: AppProvider;
  codeVerifier: string;
  scopes: string[];
  /** SHA-256 of the browser binding cookie's value (browser-binding.ts). */
  browserBindingHash: string;
  expiresAt: Date;
  createdAt: CreatedAt;
}

export interface AppConnectionsTable {
  id: string;
  accountId: string;
  provider: AppProvider;
  status: ConnectionStatus;
  scopes: string[];
  providerSubject: string;
  providerAccountId: string;
  providerAccountName: string;
  /** Sealed envelope; `null` for providers without refresh tokens (`code`). */
  refreshToken: string | null;
  /** Sealed envelope. */
  accessToken: string;
  /** `null`: the token does not expire (`code`). */
  accessTokenExpiresAt: Date | null;
  /** The provider's `expires_in` for the current access token; `null`: unknown or `code`. */
  accessTokenLifetimeSeconds: number | null;
  tokenRequestedAt: Date | null;
  refreshLeaseOwner: string | null;
  refreshLeaseUntil: Date | null;
  refreshFailedAt: Date | null;
  createdAt: CreatedAt;
  updatedAt: UpdatedAt;
}

export interface AppConnectionTombstonesTable {
  id: string;
  accountId: string;
  deletedAt: Date;
}

export interface BundlesTable {
  id: string;
  accountId: string;
  name: string;
  displayName: string;
  description: string;
  tags: Json<string[]>;
  credentials: Json<BundleCredential[]>;
  lastVersion: Generated<number>;
  /** The newest remaining version and when it was published; null while nothing is public. */
  latestVersion: number | null;
  lastPublishedAt: Date | null;
  adoptionCount: Generated<number>;
  /** Generated by PostgreSQL from the name, display name, tags and description. */
  searchVector: GeneratedAlways<string>;
  createdAt: CreatedAt;
  updatedAt: UpdatedAt;
}

/** What `publish` declared for a staging; `complete` verifies exactly this. */
export interface PublishDeclaration {
  manifest: BundleManifest;
  files: BundleFile[];
  tarball: { size: number; sha256: string };
}

export interface BundleStagingsTable {
  id: string;
  agentId: string;
  accountId: string;
  state: StagingState;
  manifest: Json<BundleManifest>;
  report: Json<StagingReport>;
  bundleId: string | null;
  publish: ColumnType<PublishDeclaration | null, string | null | undefined, string | null>;
  createdAt: CreatedAt;
  updatedAt: UpdatedAt;
}

export interface BundleUploadsTable {
  id: string;
  stagingId: string;
  sha256: string;
  size: BigInt;
  expiresAt: Date;
}

export interface BundleVersionsTable {
  id: string;
  bundleId: string;
  version: number;
  manifest: Json<BundleManifest>;
  tarballSha256: string;
  tarballSize: BigInt;
  fileCount: number;
  totalBytes: BigInt;
  readmeSha256: string | null;
  agentId: string;
  createdAt: CreatedAt;
}

export interface BundleFilesTable {
  versionId: string;
  path: string;
  sha256: string;
  size: BigInt;
}

export interface NoticePreferencesTable {
  userId: string;
  kind: NoticeKind;
  enabled: boolean;
}

export interface NoticeEventsTable {
  id: string;
  kind: NoticeKind;
  accountId: string;
  createdAt: CreatedAt;
}

export interface NoticeThrottlesTable {
  kind: NoticeKind;
  subjectId: string;
  lastAt: Date;
}

/** A shared port of an Agent: who may open `<port>--<subdomain>.<agent domain>`. */
export interface AgentPortsTable {
  agentId: string;
  port: number;
  share: PortShare;
  createdAt: CreatedAt;
  updatedAt: UpdatedAt;
}

/** A spent port ticket's nonce, kept until the ticket would have expired. */
export interface AgentPortTicketsTable {
  nonce: string;
  expiresAt: Date;
}

/**
 * A snapshot of an Agent's or a Plain VM's disk. A deleted one keeps its row (`deletedAt`): its
 * storage is billed by the second it was held.
 */
export interface MachineSnapshotsTable {
  id: string;
  machineKind: 'agent' | 'plain_vm';
  machineId: string;
  /** The machine's account while it holds the snapshot (moved with it on transfer). */
  accountId: string;
  name: string;
  kind: SnapshotKind;
  status: SnapshotStatus;
  /** Postgres bigint: strings from the driver, numbers written. */
  sizeBytes: ColumnType<string | null, number | null | undefined, number | null>;
  failureReason: string | null;
  /** The driver that holds it, and what it calls it (once it has it). */
  provider: string;
  providerRef: string | null;
  createdAt: CreatedAt;
  readyAt: Date | null;
  deletedAt: Date | null;
}

/**
 * Snapshot storage over time: one row per stretch a ready snapshot was held by one account at
 * one size (`rolloverSnapshotUsage` writes them); the open one has no end.
 */
export interface SnapshotUsageTable {
  id: string;
  seq: Generated<string>;
  snapshotId: string;
  machineKind: 'agent' | 'plain_vm';
  machineId: string;
  accountId: string;
  /** Postgres bigint: strings from the driver, numbers written. */
  sizeBytes: ColumnType<string, number, number>;
  /** The machine's size and region when the period opened (its row goes with its destroy). */
  size: Size;
  region: Region;
  startedAt: Date;
  endedAt: Date | null;
}

export interface DB {
  users: UsersTable;
  accounts: AccountsTable;
  accountMembers: AccountMembersTable;
  sessions: SessionsTable;
  emailLinks: EmailLinksTable;
  invitations: InvitationsTable;
  apiTokens: ApiTokensTable;
  rateLimits: RateLimitsTable;
  agents: AgentsTable;
  usagePeriods: UsagePeriodsTable;
  auditEvents: AuditEventsTable;
  subscriptionSlots: SubscriptionSlotsTable;
  invoiceCounter: InvoiceCounterTable;
  invoices: InvoicesTable;
  invoiceLines: InvoiceLinesTable;
  billingCustomers: BillingCustomersTable;
  billingLeases: BillingLeasesTable;
  billingEvents: BillingEventsTable;
  vaultEntries: VaultEntriesTable;
  plainVms: PlainVmsTable;
  appAuthorizationStates: AppAuthorizationStatesTable;
  appConnections: AppConnectionsTable;
  appConnectionTombstones: AppConnectionTombstonesTable;
  bundles: BundlesTable;
  bundleStagings: BundleStagingsTable;
  bundleUploads: BundleUploadsTable;
  bundleVersions: BundleVersionsTable;
  bundleFiles: BundleFilesTable;
  noticePreferences: NoticePreferencesTable;
  noticeEvents: NoticeEventsTable;
  noticeThrottles: NoticeThrottlesTable;
  agentPorts: AgentPortsTable;
  agentPortTickets: AgentPortTicketsTable;
  machineSnapshots: MachineSnapshotsTable;
  snapshotUsage: SnapshotUsageTable;
}

export type UserRow = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type AccountRow = Selectable<AccountsTable>;
export type AgentRow = Selectable<AgentsTable>;
export type PlainVmRow = Selectable<PlainVmsTable>;
export type AppConnectionRow = Selectable<AppConnectionsTable>;
