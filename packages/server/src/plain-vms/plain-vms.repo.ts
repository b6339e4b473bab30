import type { FirewallRule, MachineState } from '@svc/contract';
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

/**
 * Takes the VM's firewall lease until `until` if it is in one of `states` and nobody holds the
 * lease right now; the row as it was then, or `undefined`.
 */
export const takeFirewallLease = (
  db: Executor,
  id: string,
  states: readonly MachineState[],
  at: { now: Date; until: Date },
) =>
  db
    .updateTable('plainVms')
    .set({ firewallLeaseUntil: at.until })
    .where('id', '=', id)
    .where('state', 'in', states)
    .where((eb) =>
      eb.or([eb('firewallLeaseUntil', 'is', null), eb('firewallLeaseUntil', '<=', at.now)]),
    )
    .returningAll()
    .executeTakeFirst();

/**
 * Records the rules as the provider reported them and ends the lease, only while the lease taken
 * until `until` is still this one (false: it expired and someone else may have acted since).
 */
export const storeFirewallRules = async (
  db: Executor,
  id: string,
  rules: readonly FirewallRule[],
  until: Date,
) =>
  (
    await db
      .updateTable('plainVms')
      .set({ firewallRules: JSON.stringify(rules), firewallLeaseUntil: null })
      .where('id', '=', id)
      .where('firewallLeaseUntil', '=', until)
      .executeTakeFirst()
  ).numUpdatedRows > 0n;

/** Ends the lease taken until `until`, if it is still that one. */
export const releaseFirewallLease = (db: Executor, id: string, until: Date) =>
  db
    .updateTable('plainVms')
    .set({ firewallLeaseUntil: null })
    .where('id', '=', id)
    .where('firewallLeaseUntil', '=', until)
    .execute();

/** Ids of the VMs in `states`, whose firewalls the reconciler compares. */
export const listPlainVmIdsIn = async (db: Executor, states: readonly MachineState[]) =>
  (await db.selectFrom('plainVms').select('id').where('state', 'in', states).execute()).map(
    (row) => row.id,
  );
