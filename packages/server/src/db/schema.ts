import type { AgentState, BillingType, Cohort, Region, Size, SshKeyType } from '@svc/contract';
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

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
  createdAt: CreatedAt;
  updatedAt: UpdatedAt;
}

export interface AccountsTable {
  id: string;
  slug: string;
  kind: 'personal' | 'organization';
  name: string;
  subscriptionActive: Generated<boolean>;
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
  userId: string;
  createdAt: CreatedAt;
  expiresAt: Date;
}

export interface RateLimitsTable {
  key: string;
  windowStartedAt: Date;
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
  state: AgentState;
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
  startedAt: Date;
  endedAt: Date | null;
}

export interface AuditEventsTable {
  id: string;
  accountId: string;
  actorUserId: string | null;
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

export interface DB {
  users: UsersTable;
  accounts: AccountsTable;
  accountMembers: AccountMembersTable;
  sessions: SessionsTable;
  rateLimits: RateLimitsTable;
  agents: AgentsTable;
  usagePeriods: UsagePeriodsTable;
  auditEvents: AuditEventsTable;
  subscriptionSlots: SubscriptionSlotsTable;
  vaultEntries: VaultEntriesTable;
}

export type UserRow = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type AccountRow = Selectable<AccountsTable>;
export type AgentRow = Selectable<AgentsTable>;
