import type { MachineMoveAction } from '@svc/contract';
import { z } from 'zod';
import { defineJob, type JobType } from '../jobs/job.js';
import type { MachineTable } from './machine.repo.js';

/** The jobs every kind of machine has: one per move, provisioning and its deadline, the reconciler. */
export type MachineJob = MachineMoveAction | 'provision' | 'provisionTimeout' | 'reconcile';

/** A machine job's payload: the machine's id under its kind's key. */
export type MachinePayload = { readonly agentId: string } | { readonly plainVmId: string };

/** The declarations of one kind's jobs. */
export type MachineJobTypes = Readonly<
  Record<Exclude<MachineJob, 'reconcile'>, JobType<MachinePayload>> & {
    reconcile: JobType<Record<string, never>>;
  }
>;

/**
 * Declares one kind's jobs. A move's run waits for the machine to answer, so its expiry is set
 * where the handlers are built, from the configured wait (lifecycle-jobs.ts).
 */
const machineJobs = (
  payload: z.ZodType<MachinePayload>,
  names: Readonly<Record<MachineJob, string>>,
): MachineJobTypes => ({
  provision: defineJob({ name: names.provision, payload }),
  provisionTimeout: defineJob({ name: names.provisionTimeout, payload }),
  start: defineJob({ name: names.start, payload }),
  stop: defineJob({ name: names.stop, payload }),
  restart: defineJob({ name: names.restart, payload }),
  destroy: defineJob({ name: names.destroy, payload }),
  reconcile: defineJob({
    name: names.reconcile,
    payload: z.object({}) as z.ZodType<Record<string, never>>,
    cron: '*/5 * * * *',
    retryLimit: 0,
  }),
});

/** Everything the shared lifecycle code needs to know about one kind of machine, said once. */
export interface MachineKind {
  /** Usage, audit and server-label kind. */
  readonly kind: 'agent' | 'plain_vm';
  readonly table: MachineTable;
  /** The id key of its job payloads. */
  readonly idKey: 'agentId' | 'plainVmId';
  /** How messages name it. */
  readonly noun: string;
  /** Its jobs, their names written out so that a search for one finds where it is defined. */
  readonly jobs: MachineJobTypes;
}

export const AGENT: MachineKind = {
  kind: 'agent',
  table: 'agents',
  idKey: 'agentId',
  noun: 'Agent',
  jobs: machineJobs(z.object({ agentId: z.uuid() }), {
    provision: 'agent.provision',
    provisionTimeout: 'agent.provision-timeout',
    start: 'agent.start',
    stop: 'agent.stop',
    restart: 'agent.restart',
    destroy: 'agent.destroy',
    reconcile: 'agents.reconcile',
  }),
};

export const PLAIN_VM: MachineKind = {
  kind: 'plain_vm',
  table: 'plainVms',
  idKey: 'plainVmId',
  noun: 'Plain VM',
  jobs: machineJobs(z.object({ plainVmId: z.uuid() }), {
    provision: 'plain-vm.provision',
    provisionTimeout: 'plain-vm.provision-timeout',
    start: 'plain-vm.start',
    stop: 'plain-vm.stop',
    restart: 'plain-vm.restart',
    destroy: 'plain-vm.destroy',
    reconcile: 'plain-vms.reconcile',
  }),
};

/** The payload of `kind`'s machine jobs for the machine `id`. */
export const machinePayload = (kind: MachineKind, id: string): MachinePayload =>
  ({ [kind.idKey]: id }) as MachinePayload;

/** The machine id in a payload of `kind`'s jobs (parsed by the kind's schema). */
export const machineIdOf = (kind: MachineKind, payload: MachinePayload): string =>
  (payload as Record<string, string>)[kind.idKey] as string;
