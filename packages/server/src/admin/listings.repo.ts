import { sql } from 'kysely';
import type { Executor } from '../db/database.js';

/** The operator's lists (`npm run admin -- list …`): every row, newest first, no secrets. */

export const listUsers = (db: Executor) =>
  db
    .selectFrom('users')
    .select(['id', 'email', 'name', 'emailVerifiedAt', 'createdAt'])
    .orderBy('createdAt', 'desc')
    .orderBy('id')
    .execute();

export const listOrganizations = (db: Executor) =>
  db
    .selectFrom('accounts')
    .where('kind', '=', 'organization')
    .select((eb) => [
      'accounts.id',
      'accounts.slug',
      'accounts.name',
      'accounts.subscriptionActive',
      eb
        .selectFrom('accountMembers')
        .whereRef('accountMembers.accountId', '=', 'accounts.id')
        .select(sql<number>`count(*)::int`.as('n'))
        .as('members'),
      'accounts.createdAt',
    ])
    .orderBy('accounts.createdAt', 'desc')
    .orderBy('accounts.id')
    .execute();

export const listAgents = (db: Executor) =>
  db
    .selectFrom('agents')
    .innerJoin('accounts', 'accounts.id', 'agents.accountId')
    .select([
      'agents.id',
      'agents.name',
      'accounts.slug as account',
      'agents.state',
      'agents.size',
      'agents.region',
      'agents.cohort',
      'agents.createdAt',
    ])
    .orderBy('agents.createdAt', 'desc')
    .orderBy('agents.id')
    .execute();

export const listPlainVms = (db: Executor) =>
  db
    .selectFrom('plainVms')
    .innerJoin('accounts', 'accounts.id', 'plainVms.accountId')
    .select([
      'plainVms.id',
      'plainVms.name',
      'accounts.slug as account',
      'plainVms.state',
      'plainVms.size',
      'plainVms.region',
      'plainVms.osImageKey as os',
      'plainVms.createdAt',
    ])
    .orderBy('plainVms.createdAt', 'desc')
    .orderBy('plainVms.id')
    .execute();
