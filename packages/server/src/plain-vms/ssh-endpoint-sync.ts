import { SETTLED as SETTLED_STATE, statesWhere } from '@svc/contract';
import type { ComputeDriver } from '../adapters/compute/compute-driver.js';
import type { Database } from '../db/database.js';
import { RECONCILE_PAGE_SIZE } from '../lifecycle/machine.repo.js';
import type { Logger } from '../logger.js';
import * as repo from './plain-vms.repo.js';

/** No lifecycle job works on these: the row may follow the driver. */
const SETTLED = statesWhere(SETTLED_STATE);

export interface SshEndpointSyncDeps {
  readonly database: Database;
  readonly compute: ComputeDriver;
  readonly log: Logger;
}

/**
 * The reconciler's pass over the Plain VMs' `ssh` field: provisioning records where the VM's SSH
 * server is, but the driver may move it later (on Incus, `INCUS_PUBLIC_ADDRESS` set, changed or
 * unset, or a lost port taken by another VM), so each settled VM whose row says otherwise gets
 * what the driver reports now. One list from the driver, the rows a page at a time, one write
 * per page that differs; a VM under a move (or whose row changed meanwhile) is left to the next
 * pass.
 */
export async function syncSshEndpoints(
  deps: SshEndpointSyncDeps,
  pageSize = RECONCILE_PAGE_SIZE,
): Promise<void> {
  const { database, compute, log } = deps;
  const servers = await compute.listServers({ managedBy: 'svc', kind: 'plain_vm' });
  const reported = new Map(
    servers.flatMap((server) => (server.ssh ? [[server.id, server.ssh]] : [])),
  );
  if (reported.size === 0) return;
  for (let afterId: string | null = null; ; ) {
    const vms = await repo.pageOfSshEndpoints(database.db, SETTLED, { afterId, limit: pageSize });
    const changes = vms.flatMap((vm) => {
      const ssh = reported.get(vm.id);
      if (!ssh || (ssh.host === vm.sshHost && ssh.port === vm.sshPort)) return [];
      return [{ id: vm.id, ...ssh, wasHost: vm.sshHost, wasPort: vm.sshPort }];
    });
    const stored = new Set(await repo.storeSshEndpoints(database.db, changes, SETTLED));
    for (const change of changes.filter((each) => stored.has(each.id))) {
      log.info(
        { plainVmId: change.id, ssh: { host: change.host, port: change.port } },
        'the SSH endpoint follows the driver',
      );
    }
    if (vms.length < pageSize) return;
    afterId = (vms[vms.length - 1] as { id: string }).id;
  }
}
