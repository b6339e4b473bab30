import { defaultUserOf } from '@svc/contract';
import type { PlainVmRow } from '../db/schema.js';
import { type LifecycleJobsDeps, lifecycleJobs } from '../lifecycle/lifecycle-jobs.js';
import { PLAIN_VM } from '../lifecycle/machine-kinds.js';
import { buildUserData } from './cloud-init.js';
import { firewallSync } from './firewall-sync.js';
import * as repo from './plain-vms.repo.js';

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
    reconcile: async () => {
      await firewallSync(deps).reconcile();
      await deps.compute.reconcile?.();
    },
  });
