import { canApply, type MachineState } from '@svc/contract';
import type { Clock } from '../adapters/clock.js';
import type { ComputeDriver, ServerInfo } from '../adapters/compute/compute-driver.js';
import * as agentsRepo from '../agents/agents.repo.js';
import type { Database } from '../db/database.js';

/** Where the service reaches an Agent's gateway. */
export interface EdgeTarget {
  readonly host: string;
  readonly port: number;
  /** The machine whose certificate the gateway must show (over TLS). */
  readonly machineId: string;
  /** Reached over TLS (cloud drivers); the local driver's loopback gateways speak plain HTTP. */
  readonly tls: boolean;
}

/** What a subdomain leads to right now. */
export type EdgeResolution =
  | { readonly kind: 'route'; readonly agentId: string; readonly target: EdgeTarget }
  /** An Agent that cannot be opened in its state (stopped, starting, …). */
  | { readonly kind: 'not_running'; readonly agentId: string; readonly state: MachineState }
  /** A running Agent whose driver names no gateway (its machine is gone or not made yet). */
  | { readonly kind: 'unreachable' }
  | { readonly kind: 'unknown' };

/**
 * Where the edge reaches an Agent's server: the gateway its driver names, nothing else. A move
 * into `running` waits for an answer there too (`agents.jobs.ts`).
 */
export const gatewayTarget = (server: ServerInfo | undefined): EdgeTarget | undefined =>
  server?.gateway && {
    host: server.gateway.host,
    port: server.gateway.port,
    machineId: server.id,
    tls: server.gateway.tls === true,
  };

/**
 * How long a route is used without asking the database again. Short, because another process
 * (a worker completing a move, another replica taking a stop) cannot tell this one that the
 * Agent moved; in this process `forget` ends an entry at once. Serving a stale entry for this long
 * is safe: the edge asks a TLS gateway for its machine's name (`servername`), and a machine's
 * certificate names its own machine only, so at an address that now belongs to another machine
 * the handshake fails and nothing meant for this Agent reaches that one. (A local gateway,
 * without TLS, checks every ticket and cookie with its own Agent's current token.) An address
 * nobody listens on any more fails the connection, which drops the entry (`forget`).
 */
export const ROUTE_TTL_MS = 30_000;

/** At most this many routes are kept; past it the oldest goes first. */
const MAX_ROUTES = 10_000;

export interface EdgeRoutesDeps {
  readonly database: Database;
  readonly compute: ComputeDriver;
  readonly clock: Clock;
  readonly ttlMs?: number;
}

/**
 * Subdomain → the Agent's gateway, cached. A miss costs one query (the Agent by subdomain) and
 * one driver call (`getServer(id).gateway`); requests for the same subdomain that miss together
 * share them. Only routes are cached: an Agent that is not running, or a subdomain nobody has,
 * is asked again each time, so an Agent is reachable as soon as it runs.
 */
export function createEdgeRoutes(deps: EdgeRoutesDeps) {
  const ttlMs = deps.ttlMs ?? ROUTE_TTL_MS;
  const routes = new Map<string, { agentId: string; target: EdgeTarget; expiresAt: number }>();
  const pending = new Map<string, Promise<EdgeResolution>>();
  /** Moves on with every `forget`: a lookup that began before one does not store its answer. */
  let forgets = 0;
  let lookups = 0;
  /** Resolutions answered from the cache, and the rest (`/metrics`). */
  let hits = 0;
  let misses = 0;

  async function lookUp(subdomain: string): Promise<EdgeResolution> {
    lookups += 1;
    const agent = await agentsRepo.findAgentBySubdomain(deps.database.db, subdomain);
    if (!agent) return { kind: 'unknown' };
    if (!canApply('open', agent.state)) {
      return { kind: 'not_running', agentId: agent.id, state: agent.state };
    }
    const target = gatewayTarget(await deps.compute.getServer(agent.id));
    if (!target) return { kind: 'unreachable' };
    return { kind: 'route', agentId: agent.id, target };
  }

  async function lookUpAndStore(subdomain: string): Promise<EdgeResolution> {
    const before = forgets;
    const found = await lookUp(subdomain);
    if (found.kind === 'route' && forgets === before) {
      if (routes.size >= MAX_ROUTES) routes.delete(routes.keys().next().value as string);
      routes.set(subdomain, {
        agentId: found.agentId,
        target: found.target,
        expiresAt: deps.clock.now().getTime() + ttlMs,
      });
    }
    return found;
  }

  return {
    /** Where `subdomain` leads: from the cache while its entry lives, else looked up. */
    resolve(subdomain: string): Promise<EdgeResolution> {
      const cached = routes.get(subdomain);
      if (cached && cached.expiresAt > deps.clock.now().getTime()) {
        hits += 1;
        return Promise.resolve({ kind: 'route', agentId: cached.agentId, target: cached.target });
      }
      if (cached) routes.delete(subdomain);
      misses += 1;
      const shared = pending.get(subdomain);
      if (shared) return shared;
      const lookup = lookUpAndStore(subdomain).finally(() => {
        if (pending.get(subdomain) === lookup) pending.delete(subdomain);
      });
      pending.set(subdomain, lookup);
      return lookup;
    },

    /** Drops the subdomain's route in this process (the Agent moved, or its gateway failed). */
    forget(subdomain: string): void {
      forgets += 1;
      routes.delete(subdomain);
      pending.delete(subdomain);
    },

    /** Drops every route (changes may have been missed while other processes' news was lost). */
    clear(): void {
      forgets += 1;
      routes.clear();
      pending.clear();
    },

    /** Routes held now; resolutions answered from them (hits) and the others (misses). */
    stats(): { cached: number; hits: number; misses: number } {
      return { cached: routes.size, hits, misses };
    },

    /** How many times the database was asked (tests check that cached requests never are). */
    get lookups(): number {
      return lookups;
    },
  };
}

export type EdgeRoutes = ReturnType<typeof createEdgeRoutes>;
