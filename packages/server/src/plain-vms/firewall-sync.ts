import { setTimeout } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import {
  type FirewallRule,
  HAS_SERVER as HAS_SERVER_STATE,
  type MachineState,
  SETTLED as SETTLED_STATE,
  statesWhere,
} from '@svc/contract';
import type { Clock } from '../adapters/clock.js';
import type { ComputeDriver } from '../adapters/compute/compute-driver.js';
import type { Database } from '../db/database.js';
import type { PlainVmRow } from '../db/schema.js';
import { AppError } from '../errors.js';
import { RECONCILE_PAGE_SIZE } from '../lifecycle/machine.repo.js';
import type { Logger } from '../logger.js';
import * as repo from './plain-vms.repo.js';

/**
 * How long one firewall change may hold its VM. Longer than any compute driver call should take: a
 * holder that dies (or hangs) blocks PUTs and the reconciler for this long, no more.
 */
export const FIREWALL_LEASE_MS = 2 * 60_000;

/** States in which the VM has a server whose firewall can change. */
export const HAS_SERVER: readonly MachineState[] = statesWhere(HAS_SERVER_STATE);

/** States the reconciler checks: no lifecycle job is working on the server. */
export const SETTLED: readonly MachineState[] = statesWhere(SETTLED_STATE);

/**
 * How long a PUT waits for a lease someone else holds (the reconciler's check of one VM, or a
 * change through another replica) before answering 409, polling every `LEASE_POLL_MS`.
 */
export const FIREWALL_LEASE_WAIT_MS = 5_000;
const LEASE_POLL_MS = 50;

export interface FirewallSyncDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly compute: ComputeDriver;
  readonly log: Logger;
  /** Default `FIREWALL_LEASE_WAIT_MS`. */
  readonly leaseWaitMs?: number;
}

/**
 * The database is the record of a VM's firewall and the compute driver enforces it; these keep the two
 * equal. A change holds the VM's lease (in its row, so it spans processes) from before the driver
 * call until the database has the result, so a PUT and the reconciler never interleave.
 */
export function firewallSync(deps: FirewallSyncDeps) {
  const { database, clock, compute, log } = deps;
  const { db } = database;

  const lease = (id: string, states: readonly MachineState[]) => {
    const now = clock.now();
    const until = new Date(now.getTime() + FIREWALL_LEASE_MS);
    return repo.takeFirewallLease(db, id, states, { now, until }).then((vm) => vm && { vm, until });
  };

  /** After a failed change: the old rules back at the compute driver, then the lease released. */
  async function putBack(vm: PlainVmRow, until: Date) {
    try {
      await compute.setFirewall(vm.id, vm.firewallRules);
    } catch (error) {
      // The reconciler re-applies the stored (old) rules once the lease is gone.
      log.warn({ plainVmId: vm.id, err: error }, 'could not put the previous firewall back');
    }
    await repo.releaseFirewallLease(db, vm.id, until).catch((error: unknown) => {
      log.warn({ plainVmId: vm.id, err: error }, 'could not release the firewall lease');
    });
  }

  /** The lease for a change, waiting out a short hold by someone else; else 409. */
  async function waitForLease(id: string) {
    for (let waitedMs = 0; ; waitedMs += LEASE_POLL_MS) {
      const held = await lease(id, HAS_SERVER);
      if (held) return held;
      const vm = await repo.findPlainVm(db, id);
      if (!vm || !HAS_SERVER.includes(vm.state)) {
        throw new AppError('invalid_state', {
          message: `no firewall to change while ${vm?.state ?? 'destroyed'}`,
        });
      }
      if (waitedMs >= (deps.leaseWaitMs ?? FIREWALL_LEASE_WAIT_MS)) {
        throw new AppError('invalid_state', {
          message: 'another firewall change is under way; try again',
        });
      }
      await setTimeout(LEASE_POLL_MS);
    }
  }

  /** Under one lease per VM, taken and ended a page at a time: the stored rules re-applied. */
  async function repairFirewalls(ids: readonly string[]) {
    if (ids.length === 0) return;
    const now = clock.now();
    const until = new Date(now.getTime() + FIREWALL_LEASE_MS);
    // VMs a change leased meanwhile are not among these: they are left to that change.
    const leased = await repo.takeFirewallLeases(db, ids, SETTLED, { now, until });
    const stored: { id: string; rules: FirewallRule[] }[] = [];
    for (const vm of leased) {
      try {
        const enforced = await compute.getFirewall(vm.id);
        if (enforced && !isDeepStrictEqual(enforced, vm.firewallRules)) {
          log.warn({ plainVmId: vm.id }, 'the provider enforces other firewall rules; re-applying');
          stored.push({ id: vm.id, rules: await compute.setFirewall(vm.id, vm.firewallRules) });
        }
      } catch (error) {
        log.warn({ plainVmId: vm.id, err: error }, 'firewall reconciliation failed; next run');
      }
    }
    const isStored = new Set(await repo.storeFirewallRulesOf(db, stored, until));
    // Stored ones ended their lease with the rules; a lease that expired meanwhile is not ours.
    const unchanged = leased.map((vm) => vm.id).filter((id) => !isStored.has(id));
    await repo.releaseFirewallLeases(db, unchanged, until);
  }

  return {
    /**
     * Replaces the VM's rules and answers with what the compute driver reports (stored as its rules).
     * A failure anywhere (the driver's answer lost after it applied, the database write) puts the
     * old rules back at the compute driver, so both stay on the old rules; if even that fails, the
     * reconciler does it.
     */
    async replace(id: string, rules: readonly FirewallRule[]): Promise<FirewallRule[]> {
      const { vm, until } = await waitForLease(id);
      let reported: FirewallRule[];
      let isStored: boolean;
      try {
        reported = await compute.setFirewall(id, rules);
        isStored = await repo.storeFirewallRules(db, id, reported, until);
      } catch (error) {
        await putBack(vm, until);
        // Destroyed meanwhile: the server is gone, which is a state problem, not a fault.
        const now = await repo.findPlainVm(db, id);
        if (!now || !HAS_SERVER.includes(now.state)) {
          throw new AppError('invalid_state', { cause: error });
        }
        throw error;
      }
      // The lease ran out under the driver call: someone else may act on the VM now, so leave
      // the compute driver to them and the reconciler.
      if (!isStored) throw new Error('firewall lease expired during the provider call');
      return reported;
    },

    /**
     * Re-applies the stored rules to every settled VM whose compute driver reports others (a change
     * whose put-back failed, a crash between the compute driver and the database, a change by hand),
     * and stores what the compute driver then reports. VMs under a change are left for the next run.
     *
     * The VMs are read a page at a time and compared with the compute driver without a lease; only
     * those that differ are leased (one statement per page of them), read again under the lease
     * (a change may have finished meanwhile), repaired, and stored or released (one statement
     * each). Reads at a slow compute driver thus hold no VM's lease.
     */
    async reconcile(pageSize = RECONCILE_PAGE_SIZE): Promise<void> {
      // Repaired a page of differing VMs at a time: drift is rare, so a pass over many pages
      // usually repairs once, at its end.
      let differing: string[] = [];
      for (let afterId: string | null = null; ; ) {
        const page = { afterId, limit: pageSize, now: clock.now() };
        const vms = await repo.pageOfFreeFirewalls(db, SETTLED, page);
        for (const vm of vms) {
          try {
            const enforced = await compute.getFirewall(vm.id);
            if (enforced && !isDeepStrictEqual(enforced, vm.firewallRules)) differing.push(vm.id);
          } catch (error) {
            log.warn({ plainVmId: vm.id, err: error }, 'firewall reconciliation failed; next run');
          }
        }
        const isLast = vms.length < pageSize;
        if (isLast || differing.length >= pageSize) {
          await repairFirewalls(differing);
          differing = [];
        }
        if (isLast) return;
        afterId = (vms[vms.length - 1] as { id: string }).id;
      }
    },
  };
}
