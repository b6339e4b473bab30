import { randomUUID } from 'node:crypto';
import { type Agent, type BillingType, type Region, SIZE_ORDER, type Size } from '@svc/contract';
import type { AccountsService } from '../accounts/accounts.service.js';
import type { Clock } from '../adapters/clock.js';
import type { ComputeDriver } from '../adapters/compute/compute-driver.js';
import { recordAuditEvent } from '../audit/audit.js';
import { takeSlot } from '../billing/slots.js';
import { rolloverUsage } from '../billing/usage.js';
import type { Database, Executor } from '../db/database.js';
import type { AgentRow } from '../db/schema.js';
import { AppError } from '../errors.js';
import type { AgentPrincipal } from '../http/app-env.js';
import type { JobQueue } from '../jobs/queue.js';
import { AGENT_MOVES, type AgentAction, isTransient } from './agent-lifecycle.js';
import { readAgentToken } from './agent-token.js';
import { meteredAgent, newSubdomain, toApiAgent } from './agent-view.js';
import * as repo from './agents.repo.js';
import { agentBootstrapEnv } from './bootstrap-env.js';

/** Legacy-cohort Agents run on this provider. */
export const LEGACY_PROVIDER = 'fly';

export interface AgentsDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly jobs: JobQueue;
  readonly accounts: AccountsService;
  readonly compute: ComputeDriver;
  readonly publicUrl: string;
  readonly provisionTimeoutMs: number;
  readonly hmacKey: Buffer;
}

export function createAgentsService(deps: AgentsDeps) {
  const { database, clock, jobs, accounts } = deps;
  const { db } = database;

  /** The Agent if the user is a member of its account; otherwise `not_found` either way. */
  async function requireAgent(executor: Executor, userId: string, agentId: string) {
    const agent = await repo.findAgent(executor, agentId);
    if (!agent) throw new AppError('not_found');
    const { account } = await accounts.requireMember(executor, { userId }, agent.accountId);
    return Object.assign(agent, { account });
  }

  const toAgent = (row: AgentRow): Agent => toApiAgent(row, deps.publicUrl);

  /** Inserts a new Agent in `provisioning` with its usage, audit event and jobs. */
  async function provisionNew(
    tx: Executor,
    userId: string,
    account: { id: string; subscriptionActive: boolean },
    input: {
      id?: string;
      name: string;
      size: Size;
      region: Region;
      billingType: BillingType;
      provider: string;
      cloneSourceId?: string;
    },
  ) {
    const now = clock.now();
    const slot =
      input.billingType === 'subscription'
        ? await takeSubscriptionSlot(tx, account, input, now)
        : undefined;
    const agent = await repo.insertAgent(tx, {
      id: input.id ?? randomUUID(),
      accountId: account.id,
      name: input.name,
      subdomain: newSubdomain(input.name),
      size: input.size,
      region: input.region,
      billingType: input.billingType,
      state: 'provisioning',
      statusReason: null,
      provider: input.provider,
      provisionDeadlineAt: new Date(now.getTime() + deps.provisionTimeoutMs),
      slotId: slot?.slotId ?? null,
      cloneSourceId: input.cloneSourceId ?? null,
      createdAt: now,
      updatedAt: now,
    });
    await rolloverUsage(tx, meteredAgent(agent), now);
    await recordAuditEvent(
      tx,
      {
        accountId: account.id,
        actorUserId: userId,
        action: input.cloneSourceId ? 'agent.clone' : 'agent.create',
        resourceKind: 'agent',
        resourceId: agent.id,
        ...(input.cloneSourceId && { data: { sourceId: input.cloneSourceId } }),
      },
      now,
    );
    await jobs.enqueue(tx, 'agent.provision', { agentId: agent.id });
    await jobs.enqueue(
      tx,
      'agent.provision-timeout',
      { agentId: agent.id },
      { startAfterSeconds: Math.ceil(deps.provisionTimeoutMs / 1000) },
    );
    return agent;
  }

  return {
    /** The Agent an HMAC token speaks for, if the token is genuine and current. */
    async authenticateToken(token: string): Promise<AgentPrincipal | undefined> {
      const claim = readAgentToken(deps.hmacKey, token);
      if (!claim) return undefined;
      const agent = await repo.findAgent(db, claim.agentId);
      // A destroyed Agent's row is gone; one being destroyed no longer speaks either.
      if (!agent || agent.tokenGen !== claim.gen || agent.state === 'destroying') return undefined;
      return { agentId: agent.id, accountId: agent.accountId };
    },

    /** Operator: moves an Agent to the legacy cohort (provider `fly`). */
    async markLegacy(agentId: string): Promise<Agent> {
      const row = await repo.setCohort(db, agentId, 'legacy', LEGACY_PROVIDER, clock.now());
      if (!row) throw new AppError('not_found', { message: `no Agent ${agentId}` });
      return toAgent(row);
    },

    /**
     * Operator: the Agent's current token; with `regenerate`, a new one (older tokens stop
     * working) that is also handed to the machine.
     */
    async agentToken(
      agentId: string,
      regenerate: boolean,
    ): Promise<{ agentId: string; token: string }> {
      const row = regenerate
        ? await repo.bumpTokenGen(db, agentId)
        : await repo.findAgent(db, agentId);
      if (!row) throw new AppError('not_found', { message: `no Agent ${agentId}` });
      const env = agentBootstrapEnv(deps.publicUrl, deps.hmacKey, row);
      if (regenerate && row.provider === deps.compute.name && !isTransient(row.state)) {
        await deps.compute.setBootstrapEnv(agentId, env);
      }
      return { agentId, token: env.SVC_HMAC_TOKEN as string };
    },

    async getSelf(principal: AgentPrincipal): Promise<Agent> {
      const agent = await repo.findAgent(db, principal.agentId);
      if (!agent) throw new AppError('unauthorized');
      return toAgent(agent);
    },

    async create(
      userId: string,
      input: {
        name: string;
        size: Size;
        region: Region;
        billingType: BillingType;
        accountId?: string;
      },
    ): Promise<Agent> {
      return database.transaction(async (tx) => {
        const account = await accounts.resolveTargetAccount(tx, userId, input.accountId);
        const agent = await provisionNew(tx, userId, account, {
          ...input,
          provider: deps.compute.name,
        });
        return toAgent(agent);
      });
    },

    /**
     * Clones a running or stopped current-cohort Agent into the same region and provider. The
     * source is "being cloned" until the clone's disk copy is done: it refuses DELETE, stop,
     * restart and another clone meanwhile.
     */
    async clone(
      userId: string,
      sourceId: string,
      input: { name: string; size: Size; billingType: BillingType; accountId?: string },
    ): Promise<Agent> {
      return database.transaction(async (tx) => {
        const source = await requireAgent(tx, userId, sourceId);
        if (source.cohort === 'legacy') throw new AppError('legacy_cohort');
        if (SIZE_ORDER.indexOf(input.size) < SIZE_ORDER.indexOf(source.size)) {
          throw new AppError('size_downgrade');
        }
        const account = await accounts.resolveTargetAccount(
          tx,
          userId,
          input.accountId ?? source.accountId,
        );
        const cloneId = randomUUID();
        if (!(await repo.claimCloneSource(tx, sourceId, cloneId, clock.now()))) {
          throw new AppError('invalid_state', {
            message: `cannot clone an Agent that is ${source.state}${source.cloningBy ? ' and being cloned' : ''}`,
          });
        }
        const clone = await provisionNew(tx, userId, account, {
          ...input,
          id: cloneId,
          region: source.region,
          provider: source.provider,
          cloneSourceId: sourceId,
        });
        return toAgent(clone);
      });
    },

    /** Moves a running or stopped Agent to another organization; it arrives metered. */
    async transfer(userId: string, agentId: string, targetAccountId: string): Promise<Agent> {
      return database.transaction(async (tx) => {
        const agent = await requireAgent(tx, userId, agentId);
        if (targetAccountId === agent.accountId) {
          throw new AppError('invalid_request', {
            issues: [
              {
                path: ['body', 'targetAccountId'],
                message: 'The Agent is already in this account',
                code: 'custom',
              },
            ],
          });
        }
        await accounts.requireTransferTarget(tx, userId, targetAccountId);
        const now = clock.now();
        const moved = await repo.moveToAccount(tx, agentId, targetAccountId, now);
        if (!moved)
          throw new AppError('invalid_state', {
            message: `cannot transfer an Agent that is ${agent.state}`,
          });
        // Usage splits here: the old account's period ends as the new account's begins.
        await rolloverUsage(tx, meteredAgent(moved), now);
        const data = { fromAccountId: agent.accountId, toAccountId: targetAccountId };
        for (const accountId of [agent.accountId, targetAccountId]) {
          await recordAuditEvent(
            tx,
            {
              accountId,
              actorUserId: userId,
              action: 'agent.transfer',
              resourceKind: 'agent',
              resourceId: agentId,
              data,
            },
            now,
          );
        }
        return toAgent(moved);
      });
    },

    async list(userId: string, accountId?: string): Promise<Agent[]> {
      const accountIds = accountId
        ? [(await accounts.requireMember(db, { userId }, accountId)).account.id]
        : await accounts.memberAccountIds(db, userId);
      return (await repo.listAgents(db, accountIds)).map(toAgent);
    },

    async get(userId: string, agentId: string): Promise<Agent> {
      return toAgent(await requireAgent(db, userId, agentId));
    },

    /** Switches billing; subscription takes a free matching slot or adds one (`addedNewSlot`). */
    async setBilling(userId: string, agentId: string, billingType: BillingType) {
      return database.transaction(async (tx) => {
        const agent = await requireAgent(tx, userId, agentId);
        if (agent.state !== 'running' && agent.state !== 'stopped') {
          throw new AppError('invalid_state', {
            message: `cannot change billing while ${agent.state}`,
          });
        }
        if (billingType === 'subscription' && agent.cohort === 'legacy') {
          throw new AppError('legacy_cohort');
        }
        const now = clock.now();
        const slot =
          billingType === 'subscription' && agent.billingType !== 'subscription'
            ? await takeSubscriptionSlot(tx, agent.account, agent, now)
            : undefined;
        const switched = await repo.switchBilling(tx, agentId, {
          from: agent.billingType,
          to: billingType,
          slotId: slot?.slotId ?? (billingType === 'subscription' ? agent.slotId : null),
          at: now,
        });
        if (!switched) {
          throw new AppError('invalid_state', {
            message: `cannot change billing while ${agent.state}`,
          });
        }
        if (agent.billingType !== billingType) await rolloverUsage(tx, meteredAgent(switched), now);
        return { success: true as const, billingType, addedNewSlot: slot?.addedNewSlot ?? false };
      });
    },

    /** start, stop, restart, destroy: one guarded move into the transient state, plus its job. */
    async act(userId: string, agentId: string, action: AgentAction): Promise<Agent> {
      const move = AGENT_MOVES[action];
      return database.transaction(async (tx) => {
        const current = await requireAgent(tx, userId, agentId);
        const now = clock.now();
        const moved = await repo.transitionAgent(tx, agentId, {
          from: move.from,
          to: move.via,
          at: now,
          notCloning: move.refusedWhileCloning,
          // A destroyed Agent's token must stay dead even if teardown fails.
          revokeTokens: action === 'destroy',
        });
        if (!moved) {
          const cloning = current.cloningBy ? ' (being cloned)' : '';
          throw new AppError('invalid_state', {
            message: `cannot ${action} an Agent that is ${current.state}${cloning}`,
          });
        }
        await rolloverUsage(tx, meteredAgent(moved), now);
        if (action === 'destroy') {
          await recordAuditEvent(
            tx,
            {
              accountId: moved.accountId,
              actorUserId: userId,
              action: 'agent.destroy',
              resourceKind: 'agent',
              resourceId: agentId,
            },
            now,
          );
        }
        await jobs.enqueue(tx, `agent.${action}`, { agentId });
        return toAgent(moved);
      });
    },
  };
}

export type AgentsService = ReturnType<typeof createAgentsService>;

/** Subscription billing needs the account's active subscription and a slot of the Agent's kind. */
async function takeSubscriptionSlot(
  tx: Executor,
  account: { id: string; subscriptionActive: boolean },
  agent: { size: Size; region: Region },
  at: Date,
) {
  if (!account.subscriptionActive) throw new AppError('subscription_required');
  return takeSlot(
    tx,
    { accountId: account.id, product: 'agent', size: agent.size, region: agent.region },
    at,
  );
}
