import { defaultUserOf } from '@svc/contract';
import { buildUserData } from '../adapters/compute/cloud-init.js';
import type { PlainVmRow } from '../db/schema.js';
import { type LifecycleJobsDeps, lifecycleJobs } from '../lifecycle/lifecycle-jobs.js';
import { PLAIN_VM } from '../lifecycle/machine-kinds.js';
import { runEach } from '../util/run-each.js';
import { type FirewallSyncDeps, firewallSync } from './firewall-sync.js';
import * as repo from './plain-vms.repo.js';
import { syncSshEndpoints } from './ssh-endpoint-sync.js';

/**
 * What the Plain VM reconciler repairs beyond every machine's (`reconcileMachines`): each step
 * whatever became of the others, so a failing firewall check does not keep the driver from
 * putting back a lost SSH forward, nor the rows from following where the driver now reports
 * each VM's SSH server. The pass fails (and says so) if any step did.
 */
export const reconcilePlainVms = (deps: FirewallSyncDeps) =>
  runEach(deps.log, {
    firewalls: () => firewallSync(deps).reconcile(),
    "the driver's own repairs": async () => deps.compute.reconcile?.(),
    'SSH endpoints': () => syncSshEndpoints(deps),
  });

/** The jobs that complete Plain VM moves (`plain-vm.provision`, …, `plain-vms.reconcile`). */
export const plainVmJobs = (deps: LifecycleJobsDeps) =>
  lifecycleJobs<PlainVmRow>(deps, {
    kind: PLAIN_VM,
    createSpec: (vm) => {
      const login = {
        user: defaultUserOf(vm.osImageKey),
        authorizedKeys: vm.authorizedKeys,
        ...(vm.passwordHash && { passwordHash: vm.passwordHash }),
        hostname: vm.name,
      };
      return {
        id: vm.id,
        size: vm.size,
        region: vm.region,
        image: vm.osImageKey,
        bootstrapEnv: {},
        labels: { managedBy: 'svc', kind: 'plain_vm', plainVmId: vm.id },
        userData: buildUserData({
          hostname: login.hostname,
          defaultUser: login.user,
          authorizedKeys: login.authorizedKeys,
          ...(login.passwordHash && { passwordHash: login.passwordHash }),
        }),
        login,
        firewall: vm.firewallRules,
      };
    },
    leftProvisioning: async (tx, vm, server) => {
      await repo.recordServer(tx, vm.id, server);
    },
    reconcile: () => reconcilePlainVms(deps),
  });
