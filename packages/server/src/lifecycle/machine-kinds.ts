import type { MachineMoveAction } from '@svc/contract';
import type { MachineTable } from './machine.repo.js';

/** The jobs every kind of machine has: one per move, provisioning and its deadline, the reconciler. */
export type MachineJob = MachineMoveAction | 'provision' | 'provisionTimeout' | 'reconcile';

/** Everything the shared lifecycle code needs to know about one kind of machine, said once. */
export interface MachineKind {
  /** Usage, audit and server-label kind. */
  readonly kind: 'agent' | 'plain_vm';
  readonly table: MachineTable;
  /** The id key of its job payloads. */
  readonly idKey: 'agentId' | 'plainVmId';
  /** How messages name it. */
  readonly noun: string;
  /** Its job names, written out so that a search for one finds where it is defined. */
  readonly jobs: Readonly<Record<MachineJob, string>>;
}

export const AGENT: MachineKind = {
  kind: 'agent',
  table: 'agents',
  idKey: 'agentId',
  noun: 'Agent',
  jobs: {
    provision: 'agent.provision',
    provisionTimeout: 'agent.provision-timeout',
    start: 'agent.start',
    stop: 'agent.stop',
    restart: 'agent.restart',
    destroy: 'agent.destroy',
    reconcile: 'agents.reconcile',
  },
};

export const PLAIN_VM: MachineKind = {
  kind: 'plain_vm',
  table: 'plainVms',
  idKey: 'plainVmId',
  noun: 'Plain VM',
  jobs: {
    provision: 'plain-vm.provision',
    provisionTimeout: 'plain-vm.provision-timeout',
    start: 'plain-vm.start',
    stop: 'plain-vm.stop',
    restart: 'plain-vm.restart',
    destroy: 'plain-vm.destroy',
    reconcile: 'plain-vms.reconcile',
  },
};

/** The name of `kind`'s job for `job`. */
export const jobName = (kind: MachineKind, job: MachineJob): string => kind.jobs[job];
