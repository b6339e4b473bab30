import type { FirewallRule } from '@svc/contract';
import type { Insertable } from 'kysely';
import type { ServerInfo } from '../adapters/compute/compute-driver.js';
import type { Executor } from '../db/database.js';
import type { PlainVmRow, PlainVmsTable } from '../db/schema.js';
import { findMachine } from '../lifecycle/machine.repo.js';

export const insertPlainVm = (db: Executor, vm: Insertable<PlainVmsTable>) =>
  db.insertInto('plainVms').values(vm).returningAll().executeTakeFirstOrThrow();

export const findPlainVm = (db: Executor, id: string) =>
  findMachine<PlainVmRow>(db, 'plainVms', id);

export const listPlainVms = (db: Executor, accountIds: readonly string[]) =>
  accountIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom('plainVms')
        .selectAll()
        .where('accountId', 'in', accountIds)
        .orderBy('createdAt')
        .orderBy('id')
        .execute();

/** The public keys of these Vault entries, in the order asked, if all belong to the account. */
export const findVaultKeys = (db: Executor, accountId: string, ids: readonly string[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom('vaultEntries')
        .select(['id', 'publicKey'])
        .where('accountId', '=', accountId)
        .where('id', 'in', ids)
        .execute();

/**
 * What provisioning learned: addresses and the SSH endpoint. The one-time password's hash is
 * dropped: the server has it now, and nothing else needs it.
 */
export const recordServer = (db: Executor, id: string, server: ServerInfo | undefined) =>
  db
    .updateTable('plainVms')
    .set({
      passwordHash: null,
      ...(server && {
        ipv4: server.ipv4 ?? null,
        ipv6: server.ipv6 ?? null,
        sshHost: server.ssh?.host ?? null,
        sshPort: server.ssh?.port ?? null,
      }),
    })
    .where('id', '=', id)
    .execute();

/** The rules as the provider reported them after a change. */
export const setFirewallRules = (db: Executor, id: string, rules: readonly FirewallRule[]) =>
  db
    .updateTable('plainVms')
    .set({ firewallRules: JSON.stringify(rules) })
    .where('id', '=', id)
    .execute();
