import {
  AGENT_GATEWAY_PORT,
  type AgentPort,
  canApply,
  MAX_SHARED_PORTS,
  type MachineState,
  PORT_MAX,
  PORT_MIN,
  PORT_OPEN_PATH,
  type PortShare,
} from '@svc/contract';
import { MANAGERS, type Membership } from '../accounts/membership.js';
import type { Clock } from '../adapters/clock.js';
import { recordAuditEvent } from '../audit/audit.js';
import type { Database, Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import { issuePortTicket, type PortOpener, portAccessKey } from './agent-port-access.js';
import * as portsRepo from './agent-ports.repo.js';
import * as repo from './agents.repo.js';

export interface AgentPortsDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly membership: Membership;
  /**
   * The ports the Agent's gateway sees listening (`gatewayListening`); `undefined` when it does
   * not answer in time.
   */
  readonly listening: (agentId: string) => Promise<readonly number[] | undefined>;
  readonly agentOrigin: { readonly scheme: string; readonly domain: string };
  readonly hmacKey: Buffer;
}

/** A port the gateway reports that may be shared: unprivileged, not the gateway's own. */
const sharable = (port: number) =>
  port >= PORT_MIN && port <= PORT_MAX && port !== AGENT_GATEWAY_PORT;

/**
 * Shared ports (`<port>--<subdomain>.<agent domain>`): which ports of an Agent are shared and
 * with whom, what its gateway sees listening, and one-time links for the browser. Sharing is an
 * Agent setting: any member may change it, and each change is audited.
 */
export function createAgentPortsService(deps: AgentPortsDeps) {
  const { database, clock, membership } = deps;
  const { db } = database;
  const key = portAccessKey(deps.hmacKey);

  /** The Agent and the caller's role in its account; not a member → `not_found`. */
  async function requireAgent(executor: Executor, userId: string, agentId: string) {
    const agent = await repo.findAgent(executor, agentId);
    if (!agent) throw new AppError('not_found');
    const { role } = await membership.requireMember(executor, { userId }, agent.accountId);
    return { agent, role };
  }

  const portUrl = (subdomain: string, port: number) =>
    `${deps.agentOrigin.scheme}://${port}--${subdomain}.${deps.agentOrigin.domain}/`;

  /** What the Agent's gateway sees listening; none when it is not running or does not answer. */
  async function listening(agent: {
    id: string;
    state: MachineState;
  }): Promise<ReadonlySet<number>> {
    if (!canApply('open', agent.state)) return new Set();
    try {
      const ports = await deps.listening(agent.id);
      return new Set((ports ?? []).filter(sharable));
    } catch {
      return new Set();
    }
  }

  return {
    /** Shared ports and listening ones, by port number. */
    async list(userId: string, agentId: string): Promise<AgentPort[]> {
      const { agent } = await requireAgent(db, userId, agentId);
      const [shared, open] = await Promise.all([
        portsRepo.listSharedPorts(db, agentId),
        listening(agent),
      ]);
      const shares = new Map(shared.map((row) => [row.port, row.share]));
      const ports = [...new Set([...shares.keys(), ...open])].sort((a, b) => a - b);
      return ports.map((port) => ({
        port,
        share: shares.get(port) ?? null,
        listening: open.has(port),
        url: portUrl(agent.subdomain, port),
      }));
    },

    /** Shares the port, or changes its share level; audited as `agent.port_share`. */
    async share(userId: string, agentId: string, port: number, share: PortShare) {
      const agent = await database.transaction(async (tx) => {
        const { agent } = await requireAgent(tx, userId, agentId);
        const before = await portsRepo.findSharedPort(tx, agentId, port);
        if (before?.share === share) return agent;
        if (!before && (await portsRepo.countSharedPorts(tx, agentId)) >= MAX_SHARED_PORTS) {
          throw new AppError('invalid_request', {
            message: `An Agent shares at most ${MAX_SHARED_PORTS} ports: unshare one before sharing port ${port}`,
          });
        }
        const at = clock.now();
        await portsRepo.upsertSharedPort(tx, agentId, port, share, at);
        await recordAuditEvent(
          tx,
          {
            accountId: agent.accountId,
            actorUserId: userId,
            action: 'agent.port_share',
            resourceKind: 'agent',
            resourceId: agentId,
            data: { port, share: { from: before?.share ?? null, to: share } },
          },
          at,
        );
        return agent;
      });
      return {
        port,
        share,
        listening: (await listening(agent)).has(port),
        url: portUrl(agent.subdomain, port),
      } satisfies AgentPort;
    },

    /** Stops sharing the port (its URL answers 404); audited as `agent.port_unshare`. */
    async unshare(userId: string, agentId: string, port: number): Promise<void> {
      await database.transaction(async (tx) => {
        const { agent } = await requireAgent(tx, userId, agentId);
        const before = await portsRepo.findSharedPort(tx, agentId, port);
        if (!before || !(await portsRepo.deleteSharedPort(tx, agentId, port))) {
          throw new AppError('not_found', { message: `Port ${port} is not shared` });
        }
        const at = clock.now();
        await recordAuditEvent(
          tx,
          {
            accountId: agent.accountId,
            actorUserId: userId,
            action: 'agent.port_unshare',
            resourceKind: 'agent',
            resourceId: agentId,
            data: { port, share: before.share },
          },
          at,
        );
      });
    },

    /**
     * A one-time link to the shared port for the caller: `<port URL>/_svc/port-open?ticket=…`,
     * where the edge sets the port's cookie and sends the browser on to `next`. A `private` port
     * is for owners and admins; a `public` one needs no ticket, so its link is the page itself.
     * The ticket, and the cookie made from it, name `opener` (the caller's session or token):
     * the cookie ends with it.
     */
    async open(
      caller: { userId: string; opener: PortOpener },
      agentId: string,
      port: number,
      next = '/',
    ) {
      const { userId, opener } = caller;
      const { agent, role } = await requireAgent(db, userId, agentId);
      const shared = await portsRepo.findSharedPort(db, agentId, port);
      if (!shared) throw new AppError('not_found', { message: `Port ${port} is not shared` });
      if (shared.share === 'private' && !MANAGERS.includes(role)) {
        throw new AppError('forbidden', {
          message: "This port is private: only the account's owners and admins may open it",
        });
      }
      const base = portUrl(agent.subdomain, port);
      const nowSeconds = Math.floor(clock.now().getTime() / 1000);
      if (shared.share === 'public') {
        return {
          url: `${base}${next.slice(1)}`,
          expiresAt: new Date((nowSeconds + 60) * 1000).toISOString(),
        };
      }
      const { ticket, expiresAtSeconds } = issuePortTicket(
        key,
        { agentId, port, userId, opener },
        nowSeconds,
      );
      const query = new URLSearchParams({ ticket, next });
      return {
        url: `${base}${PORT_OPEN_PATH.slice(1)}?${query}`,
        expiresAt: new Date(expiresAtSeconds * 1000).toISOString(),
      };
    },
  };
}

export type AgentPortsService = ReturnType<typeof createAgentPortsService>;
