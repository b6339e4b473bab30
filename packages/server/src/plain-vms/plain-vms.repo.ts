import type { FirewallRule, MachineState } from '@svc/contract';
import { type Insertable, sql } from 'kysely';
import type { ServerInfo } from '../adapters/compute/compute-driver.js';
import type { Executor } from '../db/database.js';
import type { PlainVmRow, PlainVmsTable } from '../db/schema.js';
import { anyOf, findMachine } from '../lifecycle/machine.repo.js';

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

/** One keyset page of the VMs in `states` with the SSH endpoint the API reports for them. */
export const pageOfSshEndpoints = (
  db: Executor,
  states: readonly MachineState[],
  page: { afterId: string | null; limit: number },
) => {
  let query = db
    .selectFrom('plainVms')
    .select(['id', 'sshHost', 'sshPort'])
    .where('state', 'in', states);
  if (page.afterId !== null) query = query.where('id', '>', page.afterId);
  return query.orderBy('id').limit(page.limit).execute();
};

/** A VM's SSH endpoint as the driver now reports it, and as it was read from the row. */
export interface SshEndpointChange {
  readonly id: string;
  readonly host: string;
  readonly port: number;
  readonly wasHost: string | null;
  readonly wasPort: number | null;
}

/**
 * Records new SSH endpoints in one statement, each only while its VM is still in `states` and
 * still has the endpoint it was read with (a move or provisioning's own record is not undone):
 * the ids of those recorded.
 */
export const storeSshEndpoints = async (
  db: Executor,
  changes: readonly SshEndpointChange[],
  states: readonly MachineState[],
) =>
  changes.length === 0
    ? []
    : (
        await sql<{ id: string }>`
          update plain_vms as p
          set ssh_host = v."host", ssh_port = v."port"
          from jsonb_to_recordset(${JSON.stringify(changes)}::jsonb)
            as v(id uuid, "host" text, "port" integer, "wasHost" text, "wasPort" integer)
          where p.id = v.id
            and p.state = any(${[...states]})
            and p.ssh_host is not distinct from v."wasHost"
            and p.ssh_port is not distinct from v."wasPort"
          returning p.id`.execute(db)
      ).rows.map((row) => row.id);

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
 * Records the rules as the compute driver reported them and ends the lease, only while the lease taken
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

/**
 * One keyset page (`id` after `afterId`, at most `limit`) of the VMs in `states` whose firewall
 * lease is free at `now`: the ones the reconciler compares with the compute driver.
 */
export const pageOfFreeFirewalls = (
  db: Executor,
  states: readonly MachineState[],
  page: { afterId: string | null; limit: number; now: Date },
) => {
  let query = db
    .selectFrom('plainVms')
    .select(['id', 'firewallRules'])
    .where('state', 'in', states)
    .where((eb) =>
      eb.or([eb('firewallLeaseUntil', 'is', null), eb('firewallLeaseUntil', '<=', page.now)]),
    );
  if (page.afterId !== null) query = query.where('id', '>', page.afterId);
  return query.orderBy('id').limit(page.limit).execute();
};

/** `takeFirewallLease` for many VMs in one statement: the rows of those it took. */
export const takeFirewallLeases = (
  db: Executor,
  ids: readonly string[],
  states: readonly MachineState[],
  at: { now: Date; until: Date },
) =>
  ids.length === 0
    ? Promise.resolve([])
    : db
        .updateTable('plainVms')
        .set({ firewallLeaseUntil: at.until })
        .where('id', '=', anyOf(ids))
        .where('state', 'in', states)
        .where((eb) =>
          eb.or([eb('firewallLeaseUntil', 'is', null), eb('firewallLeaseUntil', '<=', at.now)]),
        )
        .returningAll()
        .execute();

/**
 * `storeFirewallRules` for many VMs in one statement, each with its own rules, all under leases
 * taken until `until`: the ids of those stored (the others' leases had expired).
 */
export const storeFirewallRulesOf = async (
  db: Executor,
  stored: readonly { id: string; rules: readonly FirewallRule[] }[],
  until: Date,
) =>
  stored.length === 0
    ? []
    : (
        await sql<{ id: string }>`
          update plain_vms as p
          set firewall_rules = v.rules, firewall_lease_until = null
          from jsonb_to_recordset(${JSON.stringify(stored)}::jsonb) as v(id uuid, rules jsonb)
          where p.id = v.id and p.firewall_lease_until = ${until}
          returning p.id`.execute(db)
      ).rows.map((row) => row.id);

/** `releaseFirewallLease` for many VMs in one statement. */
export const releaseFirewallLeases = async (db: Executor, ids: readonly string[], until: Date) => {
  if (ids.length === 0) return;
  await db
    .updateTable('plainVms')
    .set({ firewallLeaseUntil: null })
    .where('id', '=', anyOf(ids))
    .where('firewallLeaseUntil', '=', until)
    .execute();
};
