import type { Insertable } from 'kysely';
import type { Executor } from '../db/database.js';
import type { VaultEntriesTable } from '../db/schema.js';

const PUBLIC_COLUMNS = [
  'id',
  'accountId',
  'label',
  'type',
  'fingerprintSha256',
  'createdAt',
] as const;

/** Inserts unless the account already has this fingerprint; `undefined` means it does. */
export const insertEntry = (db: Executor, entry: Insertable<VaultEntriesTable>) =>
  db
    .insertInto('vaultEntries')
    .values(entry)
    .onConflict((oc) => oc.columns(['accountId', 'fingerprintSha256']).doNothing())
    .returning(PUBLIC_COLUMNS)
    .executeTakeFirst();

export const listEntries = (db: Executor, accountIds: readonly string[]) =>
  accountIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom('vaultEntries')
        .select(PUBLIC_COLUMNS)
        .where('accountId', 'in', accountIds)
        .orderBy('createdAt')
        .orderBy('id')
        .execute();

export const findEntry = (db: Executor, id: string) =>
  db.selectFrom('vaultEntries').selectAll().where('id', '=', id).executeTakeFirst();

export const deleteEntry = (db: Executor, id: string) =>
  db.deleteFrom('vaultEntries').where('id', '=', id).execute();
