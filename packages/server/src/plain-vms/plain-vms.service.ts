import { randomInt, randomUUID } from 'node:crypto';
import {
  type BackupsSettings,
  type BillingType,
  DEFAULT_FIREWALL_RULES,
  type FirewallRule,
  type FirewallRules,
  type MachineMoveAction,
  type OsImageKey,
  type PlainVm,
  type Region,
  type Size,
} from '@svc/contract';
import type { z } from 'zod';
import type { Membership } from '../accounts/membership.js';
import type { Clock } from '../adapters/clock.js';
import { hashPasswordForShadow } from '../adapters/compute/cloud-init.js';
import { type ComputeDriver, machineLimitsOf } from '../adapters/compute/compute-driver.js';
import { slotForNew } from '../billing/slots.js';
import type { Database, Executor } from '../db/database.js';
import type { PlainVmRow } from '../db/schema.js';
import { AppError } from '../errors.js';
import type { JobQueue } from '../jobs/queue.js';
import { changeBackups } from '../lifecycle/backups.js';
import {
  applyMove,
  beginProvisioning,
  changeBilling,
  resizeMachine,
  transferMachine,
} from '../lifecycle/machine-actions.js';
import { PLAIN_VM } from '../lifecycle/machine-kinds.js';
import type { Logger } from '../logger.js';
import { KeyedQueue } from '../util/keyed-queue.js';
import { canonicalRules } from './firewall.js';
import { firewallSync, HAS_SERVER } from './firewall-sync.js';
import { TRANSFER_NOTE, toApiPlainVm } from './plain-vm-view.js';
import * as repo from './plain-vms.repo.js';

export interface PlainVmsDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly jobs: JobQueue;
  readonly membership: Membership;
  readonly compute: ComputeDriver;
  readonly log: Logger;
  readonly provisionTimeoutMs: number;
}

export interface CreatePlainVmInput {
  readonly name: string;
  readonly tier: Size;
  readonly region: Region;
  readonly osImageKey: OsImageKey;
  readonly billingType: BillingType;
  readonly access: { readonly passwordEnabled: boolean; readonly vaultEntryIds: readonly string[] };
  readonly accountId?: string;
}

export function createPlainVmsService(deps: PlainVmsDeps) {
  const { database, clock, jobs, membership } = deps;
  const { db } = database;
  const firewallChanges = new KeyedQueue();
  const firewall = firewallSync(deps);

  /** The VM if the user is a member of its account; otherwise `not_found` either way. */
  async function requirePlainVm(executor: Executor, userId: string, id: string) {
    const vm = await repo.findPlainVm(executor, id);
    if (!vm) throw new AppError('not_found');
    const { account } = await membership.requireMember(executor, { userId }, vm.accountId);
    return Object.assign(vm, { account });
  }

  const toPlainVm = (row: PlainVmRow): PlainVm =>
    toApiPlainVm(row, machineLimitsOf(deps.compute, row));

  return {
    /**
     * Creates a VM in `provisioning`; the server is made in the background. With password login
     * the one-time password is in this answer and nowhere else (only its hash is kept, and only
     * until the server has it).
     */
    async create(
      userId: string,
      input: CreatePlainVmInput,
    ): Promise<PlainVm & { initialPassword?: string }> {
      const { passwordEnabled, vaultEntryIds } = input.access;
      if (!passwordEnabled && vaultEntryIds.length === 0) {
        throw invalid(['body', 'access'], 'Enable the one-time password or choose a Vault key');
      }
      const password = passwordEnabled ? oneTimePassword() : undefined;
      const passwordHash = password ? hashPasswordForShadow(password) : null;
      return database.transaction(async (tx) => {
        const account = await membership.resolveTargetAccount(tx, userId, input.accountId);
        const authorizedKeys = await chosenKeys(tx, account.id, vaultEntryIds);
        const now = clock.now();
        const kind = { product: 'plain_vm', size: input.tier, region: input.region } as const;
        const slot = await slotForNew(tx, account, input.billingType, kind, now, jobs);
        const vm = await repo.insertPlainVm(tx, {
          id: randomUUID(),
          accountId: account.id,
          name: input.name,
          size: input.tier,
          region: input.region,
          osImageKey: input.osImageKey,
          billingType: input.billingType,
          state: 'provisioning',
          statusReason: null,
          provider: deps.compute.name,
          passwordEnabled,
          passwordHash,
          vaultEntryIds: JSON.stringify([...new Set(vaultEntryIds)]),
          authorizedKeys: JSON.stringify(authorizedKeys),
          firewallRules: JSON.stringify(DEFAULT_FIREWALL_RULES),
          ipv4: null,
          ipv6: null,
          sshHost: null,
          sshPort: null,
          slotId: slot?.slotId ?? null,
          provisionDeadlineAt: new Date(now.getTime() + deps.provisionTimeoutMs),
          createdAt: now,
          updatedAt: now,
        });
        const context = { ...deps, machine: PLAIN_VM, at: now, userId };
        await beginProvisioning(tx, context, vm, { action: 'create' });
        return { ...toPlainVm(vm), ...(password && { initialPassword: password }) };
      });
    },

    async list(userId: string, accountId?: string): Promise<PlainVm[]> {
      const accountIds = accountId
        ? [(await membership.requireMember(db, { userId }, accountId)).account.id]
        : await membership.memberAccountIds(db, userId);
      return (await repo.listPlainVms(db, accountIds)).map(toPlainVm);
    },

    async get(userId: string, id: string): Promise<PlainVm> {
      return toPlainVm(await requirePlainVm(db, userId, id));
    },

    /** start, stop, restart, destroy: one guarded move into the transient state, plus its job. */
    async act(userId: string, id: string, action: MachineMoveAction): Promise<PlainVm> {
      return database.transaction(async (tx) => {
        const vm = await requirePlainVm(tx, userId, id);
        const context = { jobs, machine: PLAIN_VM, at: clock.now(), userId };
        return toPlainVm(await applyMove(tx, context, vm, action));
      });
    },

    /** Changes the VM's settings (`backups`), in any state; audited. */
    async update(userId: string, id: string, input: { backups?: BackupsSettings | undefined }) {
      return database.transaction(async (tx) => {
        const vm = await requirePlainVm(tx, userId, id);
        if (!input.backups) return toPlainVm(vm);
        const context = { machine: PLAIN_VM, at: clock.now(), userId };
        return toPlainVm(await changeBackups(tx, context, vm, input.backups));
      });
    },

    /** A stopped VM's new tier, in place (`resizeMachine`). */
    async resize(userId: string, id: string, tier: Size): Promise<PlainVm> {
      return database.transaction(async (tx) => {
        const vm = await requirePlainVm(tx, userId, id);
        const context = { compute: deps.compute, machine: PLAIN_VM, at: clock.now(), userId };
        return toPlainVm(await resizeMachine(tx, context, vm, tier));
      });
    },

    async setBilling(userId: string, id: string, billingType: BillingType) {
      return database.transaction(async (tx) => {
        const vm = await requirePlainVm(tx, userId, id);
        return changeBilling(
          tx,
          { jobs, machine: PLAIN_VM, at: clock.now(), userId },
          vm,
          billingType,
        );
      });
    },

    /** A VM that is not running or stopped answers 400 `not_transferable`, not 409 (docs/reference.md#lifecycle). */
    async transfer(userId: string, id: string, targetAccountId: string) {
      return database.transaction(async (tx) => {
        const vm = await requirePlainVm(tx, userId, id);
        const context = { membership, machine: PLAIN_VM, at: clock.now(), userId };
        const moved = await transferMachine(tx, context, vm, targetAccountId, 'not_transferable');
        return { ...toPlainVm(moved), transferNote: TRANSFER_NOTE };
      });
    },

    /**
     * The VM's rules as the database has them: what the compute driver last reported after a change,
     * and what the reconciler makes it enforce; before the server exists, the ones it will get.
     */
    async getFirewall(userId: string, id: string): Promise<{ rules: FirewallRule[] }> {
      return { rules: (await requirePlainVm(db, userId, id)).firewallRules };
    },

    /**
     * Replaces the rule set at the compute driver and answers with what it reports back.
     * Validation happened before: invalid rules never reach the compute driver, so the previous ones
     * stay in force.
     */
    async putFirewall(
      userId: string,
      id: string,
      input: z.output<typeof FirewallRules>,
    ): Promise<{ rules: FirewallRule[] }> {
      // One change per VM at a time in this process waits its turn; across processes the lease
      // in the row refuses the second (409).
      return firewallChanges.run(id, async () => {
        const vm = await requirePlainVm(db, userId, id);
        if (!HAS_SERVER.includes(vm.state)) {
          throw new AppError('invalid_state', {
            message: `no firewall to change while ${vm.state}`,
          });
        }
        return { rules: await firewall.replace(id, canonicalRules(input)) };
      });
    },
  };
}

export type PlainVmsService = ReturnType<typeof createPlainVmsService>;

const invalid = (path: (string | number)[], message: string) =>
  new AppError('invalid_request', { issues: [{ path, message, code: 'custom' }] });

/** The chosen Vault keys, each of which must belong to the VM's account. */
async function chosenKeys(tx: Executor, accountId: string, ids: readonly string[]) {
  const found = new Map(
    (await repo.findVaultKeys(tx, accountId, ids)).map((entry) => [entry.id, entry.publicKey]),
  );
  const issues = ids.flatMap((id, index) =>
    found.has(id)
      ? []
      : [
          {
            path: ['body', 'access', 'vaultEntryIds', index],
            message: 'No such key in this account’s Vault',
            code: 'custom',
          },
        ],
  );
  if (issues.length > 0) throw new AppError('invalid_request', { issues });
  return [...new Set(ids)].map((id) => found.get(id) as string);
}

const PASSWORD_ALPHABET = 'abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** 20 characters of a 57-letter alphabet without look-alikes: about 117 bits. */
function oneTimePassword(): string {
  return Array.from(
    { length: 20 },
    () => PASSWORD_ALPHABET[randomInt(PASSWORD_ALPHABET.length)],
  ).join('');
}
