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

export interface DB {
  users: UsersTable;
  accounts: AccountsTable;
  accountMembers: AccountMembersTable;
  sessions: SessionsTable;
  rateLimits: RateLimitsTable;
}

export type UserRow = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type AccountRow = Selectable<AccountsTable>;
