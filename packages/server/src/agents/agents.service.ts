import { randomUUID } from 'node:crypto';
import {
  type Agent,
  type AgentSource,
  type BackupsSettings,
  type BillingType,
  canApply,
  type MachineMoveAction,
  MOVES,
  type Region,
  SIZE_ORDER,
  type Size,
} from '@svc/contract';
import { GATEWAY_PREFIX, issueGatewayTicket } from '@svc/contract/gateway-ticket';
import type { Membership } from '../accounts/membership.js';
import type { Clock } from '../adapters/clock.js';
import { type ComputeDriver, machineLimitsOf } from '../adapters/compute/compute-driver.js';
import { recordAuditEvent } from '../audit/audit.js';
import { slotForNew } from '../billing/slots.js';
import type { Adoption, AdoptionService } from '../bundles/adoption.service.js';
import type { Database, Executor } from '../db/database.js';
import type { AgentRow } from '../db/schema.js';
import { AppError } from '../errors.js';
import type { AgentClaim, AgentPrincipal } from '../http/app-env.js';
import type { JobQueue } from '../jobs/queue.js';
import { changeBackups } from '../lifecycle/backups.js';
import {
  applyMove,
  beginProvisioning,
  changeBilling,
  diskBusy,
  resizeMachine,
  transferMachine,
} from '../lifecycle/machine-actions.js';
import { AGENT } from '../lifecycle/machine-kinds.js';
import type { Notices } from '../notices/notices.service.js';
import {
  agentGatewayKey,
  issueAgentToken,
  readAgentToken,
  SILENT_AGENT_STATE,
} from './agent-token.js';
import { newSubdomain, toApiAgent } from './agent-view.js';
import { pushToken } from './agents.jobs.js';
import * as repo from './agents.repo.js';
import { stopIdleAgents } from './idle-stop.js';
import { type VisitProof, type WakeOutcome, wakeOnVisit } from './wake-on-visit.js';

/** Legacy-cohort Agents run on this provider. */
export const LEGACY_PROVIDER = 'fly';

export interface AgentsDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly jobs: JobQueue;
  readonly membership: Membership;
  readonly compute: ComputeDriver;
  readonly publicUrl: string;
  readonly agentOrigin: { readonly scheme: string; readonly domain: string };
  readonly provisionTimeoutMs: number;
  readonly hmacKey: Buffer;
  /** Agents created from a published bundle (`source`). */
  readonly adoption: AdoptionService;
  /**
   * Called once a move of the Agent has committed (stop, restart, destroy, transfer, …): the
   * edge drops its cached route to the Agent's gateway in this process.
   */
  readonly forgetRoute?: (subdomain: string) => void;
  /** New Agents' `idleStopMinutes`, and how long one of its minutes is (`config.idleStop`). */
  readonly idleStop: { readonly defaultMinutes: number; readonly unitMs: number };
  /** The account's owners and admins are told of an idle stop (at most daily per Agent). */
  readonly notices: Pick<Notices, 'agentIdleStopped'>;
}

export function createAgentsService(deps: AgentsDeps) {
  const { database, clock, jobs, membership } = deps;
  const { db } = database;

  /** The Agent if the user is a member of its account; otherwise `not_found` either way. */
  async function requireAgent(executor: Executor, userId: string, agentId: string) {
    const agent = await repo.findAgent(executor, agentId);
    if (!agent) throw new AppError('not_found');
    const { account } = await membership.requireMember(executor, { userId }, agent.accountId);
    return Object.assign(agent, { account });
  }

  const toAgent = (row: AgentRow): Agent =>
    toApiAgent(row, deps.agentOrigin, machineLimitsOf(deps.compute, row));

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
      adoption?: Adoption;
      idleStopMinutes?: number;
    },
  ) {
    const now = clock.now();
    const kind = { product: 'agent', size: input.size, region: input.region } as const;
    const slot = await slotForNew(tx, account, input.billingType, kind, now, jobs);
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
      idleStopMinutes: input.idleStopMinutes ?? deps.idleStop.defaultMinutes,
      ...(input.adoption && {
        adoptedVersionId: input.adoption.adoptedVersionId,
        adoptedFrom: JSON.stringify(input.adoption.adoptedFrom),
        adoptionCredentials: input.adoption.adoptionCredentials,
        credentialsToSet: JSON.stringify(input.adoption.credentialsToSet),
      }),
      createdAt: now,
      updatedAt: now,
    });
    const context = {
      jobs,
      machine: AGENT,
      at: now,
      userId,
      provisionTimeoutMs: deps.provisionTimeoutMs,
    };
    await beginProvisioning(
      tx,
      context,
      agent,
      input.cloneSourceId
        ? { action: 'clone', data: { sourceId: input.cloneSourceId } }
        : { action: 'create' },
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
      if (!agent || agent.tokenGen !== claim.gen || agent.state === SILENT_AGENT_STATE) {
        return undefined;
      }
      return { agentId: agent.id, accountId: agent.accountId };
    },

    /**
     * The Agent and generation a well-signed token names, checked without the database: for an
     * endpoint whose one statement checks the generation and state itself (`agentToken: 'claim'`).
     */
    readTokenClaim: (token: string): AgentClaim | undefined => readAgentToken(deps.hmacKey, token),

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
        ? await database.transaction(async (tx) => {
            const bumped = await repo.bumpTokenGen(tx, agentId);
            if (bumped) await jobs.enqueue(tx, pushToken, { agentId });
            return bumped;
          })
        : await repo.findAgent(db, agentId);
      if (!row) throw new AppError('not_found', { message: `no Agent ${agentId}` });
      return { agentId, token: issueAgentToken(deps.hmacKey, row.id, row.tokenGen) };
    },

    async getSelf(principal: AgentPrincipal): Promise<Agent> {
      const agent = await repo.findAgent(db, principal.agentId);
      if (!agent) throw new AppError('unauthorized');
      return toAgent(agent);
    },

    /** A new Agent; with a `source`, its home starts as that published bundle version's files. */
    async create(
      userId: string,
      input: {
        name: string;
        size: Size;
        region: Region;
        billingType: BillingType;
        accountId?: string;
        source?: AgentSource;
        idleStopMinutes?: number;
      },
    ): Promise<Agent> {
      const { source, ...fields } = input;
      return database.transaction(async (tx) => {
        const account = await membership.resolveTargetAccount(tx, userId, input.accountId);
        const id = randomUUID();
        const adoption = source && (await deps.adoption.resolve(tx, id, source));
        const agent = await provisionNew(tx, userId, account, {
          ...fields,
          id,
          provider: deps.compute.name,
          ...(adoption && { adoption }),
        });
        return toAgent(agent);
      });
    },

    /**
     * Clones a running or stopped current-cohort Agent into the same region and provider; into
     * another account only for an `owner` or `admin` of the source's. The source is "being
     * cloned" until the clone's disk copy is done: it refuses DELETE, stop, restart and another
     * clone meanwhile.
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
        const account = await membership.resolveTargetAccount(
          tx,
          userId,
          input.accountId ?? source.accountId,
        );
        // A clone elsewhere carries the home out of the source account, as a transfer would.
        if (account.id !== source.accountId) {
          await membership.requireManager(tx, { userId }, source.accountId);
        }
        const cloneId = randomUUID();
        if (!(await repo.claimCloneSource(tx, sourceId, cloneId, clock.now()))) {
          throw new AppError('invalid_state', {
            message: `cannot clone the Agent while ${
              diskBusy(source) ?? `it is ${source.cloningBy ? 'being cloned' : source.state}`
            }`,
          });
        }
        const clone = await provisionNew(tx, userId, account, {
          ...input,
          id: cloneId,
          region: source.region,
          provider: source.provider,
          cloneSourceId: sourceId,
          idleStopMinutes: source.idleStopMinutes,
        });
        return toAgent(clone);
      });
    },

    /**
     * Moves a running or stopped Agent to another organization; it arrives metered. Its token
     * generation moves on, so the old account's gateway tickets and cookies stop working; a job
     * hands the machine the new token (retried until it lands).
     */
    async transfer(userId: string, agentId: string, targetAccountId: string): Promise<Agent> {
      const moved = await database.transaction(async (tx) => {
        const agent = await requireAgent(tx, userId, agentId);
        const context = { membership, machine: AGENT, at: clock.now(), userId };
        const moved = await transferMachine(
          tx,
          context,
          agent,
          targetAccountId,
          'invalid_state',
          repo.NEXT_TOKEN_GEN,
        );
        await jobs.enqueue(tx, pushToken, { agentId });
        return toAgent(moved);
      });
      deps.forgetRoute?.(moved.subdomain);
      return moved;
    },

    /** A one-time link into a running Agent's gateway (editor and terminal), for its members. */
    async openGateway(userId: string, agentId: string) {
      const agent = await requireAgent(db, userId, agentId);
      if (!canApply('open', agent.state)) {
        throw new AppError('invalid_state', {
          message: `cannot open the Agent while it is ${agent.state}`,
        });
      }
      const key = agentGatewayKey(deps.hmacKey, agent.id, agent.tokenGen);
      const nowSeconds = Math.floor(clock.now().getTime() / 1000);
      const { ticket, expiresAtSeconds } = issueGatewayTicket(key, {
        agentId: agent.id,
        gen: agent.tokenGen,
        nowSeconds,
      });
      // The Agent's url ends with `/`; built as text, so no host form can make this throw.
      const url = `${toAgent(agent).url}${GATEWAY_PREFIX.slice(1)}/open?ticket=${encodeURIComponent(ticket)}`;
      return { url, expiresAt: new Date(expiresAtSeconds * 1000).toISOString() };
    },

    async list(userId: string, accountId?: string): Promise<Agent[]> {
      const accountIds = accountId
        ? [(await membership.requireMember(db, { userId }, accountId)).account.id]
        : await membership.memberAccountIds(db, userId);
      return (await repo.listAgents(db, accountIds)).map(toAgent);
    },

    async get(userId: string, agentId: string): Promise<Agent> {
      return toAgent(await requireAgent(db, userId, agentId));
    },

    /** Changes the Agent's settings (`idleStopMinutes`, `backups`), in any state; audited. */
    async update(
      userId: string,
      agentId: string,
      input: { idleStopMinutes?: number | undefined; backups?: BackupsSettings | undefined },
    ) {
      return database.transaction(async (tx) => {
        let agent = await requireAgent(tx, userId, agentId);
        const at = clock.now();
        if (input.backups) {
          const context = { machine: AGENT, at, userId };
          agent = await changeBackups(tx, context, agent, input.backups);
        }
        const minutes = input.idleStopMinutes;
        if (minutes === undefined || agent.idleStopMinutes === minutes) return toAgent(agent);
        const updated = await repo.setIdleStopMinutes(tx, agentId, minutes, at);
        if (!updated) throw new AppError('not_found');
        await recordAuditEvent(
          tx,
          {
            accountId: agent.accountId,
            actorUserId: userId,
            action: 'agent.update',
            resourceKind: 'agent',
            resourceId: agentId,
            data: { idleStopMinutes: { from: agent.idleStopMinutes, to: minutes } },
          },
          at,
        );
        return toAgent(updated);
      });
    },

    /** Starts a stopped Agent a browser holding its gateway cookie visited (`wake-on-visit.ts`). */
    wake: (agentId: string, proof: VisitProof): Promise<WakeOutcome> =>
      wakeOnVisit(deps, agentId, proof),

    /** Stops the running Agents nobody used for their `idleStopMinutes` (`idle-stop.ts`). */
    stopIdle: (): Promise<number> => stopIdleAgents({ ...deps, unitMs: deps.idleStop.unitMs }),

    /** Switches billing; subscription takes a free matching slot or adds one (`addedNewSlot`). */
    async setBilling(userId: string, agentId: string, billingType: BillingType) {
      return database.transaction(async (tx) => {
        const agent = await requireAgent(tx, userId, agentId);
        if (!canApply('changeBilling', agent.state)) {
          throw new AppError('invalid_state', {
            message: `cannot change billing while ${agent.state}`,
          });
        }
        if (billingType === 'subscription' && agent.cohort === 'legacy') {
          throw new AppError('legacy_cohort');
        }
        return changeBilling(
          tx,
          { jobs, machine: AGENT, at: clock.now(), userId },
          agent,
          billingType,
        );
      });
    },

    /** A stopped Agent's new size, in place (`resizeMachine`). */
    async resize(userId: string, agentId: string, size: Size): Promise<Agent> {
      return database.transaction(async (tx) => {
        const agent = await requireAgent(tx, userId, agentId);
        const context = { compute: deps.compute, machine: AGENT, at: clock.now(), userId };
        return toAgent(await resizeMachine(tx, context, agent, size));
      });
    },

    /** start, stop, restart, destroy: one guarded move into the transient state, plus its job. */
    async act(userId: string, agentId: string, action: MachineMoveAction): Promise<Agent> {
      const moved = await database.transaction(async (tx) => {
        const agent = await requireAgent(tx, userId, agentId);
        const context = { jobs, machine: AGENT, at: clock.now(), userId };
        const moved = await applyMove(tx, context, agent, action, {
          notCloning: MOVES[action].refusedWhileCloning,
          // A destroyed Agent's token must stay dead even if teardown fails.
          ...(action === 'destroy' && { also: repo.NEXT_TOKEN_GEN }),
          // A person stopped it: an earlier idle stop's reason no longer says why.
          ...(action === 'stop' && { also: { stoppedReason: null } }),
        });
        return toAgent(moved);
      });
      // After the commit: a request resolving the route now reads the new state.
      deps.forgetRoute?.(moved.subdomain);
      return moved;
    },
  };
}

export type AgentsService = ReturnType<typeof createAgentsService>;
