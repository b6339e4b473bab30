import { MOVES } from '@svc/contract';
import { checkGatewayCookie, GATEWAY_COOKIE, readCookieValues } from '@svc/contract/gateway-ticket';
import type { Clock } from '../adapters/clock.js';
import { recordAuditEvent } from '../audit/audit.js';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import type { JobQueue } from '../jobs/queue.js';
import { applyMove } from '../lifecycle/machine-actions.js';
import { AGENT } from '../lifecycle/machine-kinds.js';
import { agentGatewayKey } from './agent-token.js';
import * as repo from './agents.repo.js';

/** The gateway's cookie, by either name it sets (`__Host-` over HTTPS). */
const COOKIE_NAMES = [GATEWAY_COOKIE, `__Host-${GATEWAY_COOKIE}`];

export interface WakeDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly jobs: JobQueue;
  readonly hmacKey: Buffer;
  readonly forgetRoute?: (subdomain: string) => void;
}

/**
 * Why a visit may start the Agent: the browser's `Cookie` header, to hold the gateway's cookie;
 * or the shared port the edge has just let the request through to (by the port's own rules).
 */
export type VisitProof = { readonly cookieHeader: string | undefined } | { readonly port: number };

export type WakeOutcome =
  /** The start is under way (or another visit's already was). */
  | { readonly kind: 'starting' }
  /** The browser holds no cookie of this Agent's current token generation. */
  | { readonly kind: 'not_allowed' }
  /** The start was refused, with the reason a person can act on. */
  | { readonly kind: 'refused'; readonly reason: string };

/**
 * Starts a stopped Agent because a browser that may open it visited its URL: one holding the
 * gateway's cookie (checked here with the key the gateway checks it with, the Agent's current
 * token generation, so a transferred or regenerated Agent's old cookies wake nothing), or one
 * the edge let through to a shared port. The start is a person's start (the same guarded move,
 * usage rollover and job), audited as `agent.wake` with no actor: the cookie names the Agent,
 * not a user, and a public port's visitor is nobody known.
 */
export async function wakeOnVisit(
  deps: WakeDeps,
  agentId: string,
  proof: VisitProof,
): Promise<WakeOutcome> {
  const cookies =
    'cookieHeader' in proof
      ? COOKIE_NAMES.flatMap((name) => readCookieValues(proof.cookieHeader, name))
      : [];
  if ('cookieHeader' in proof && cookies.length === 0) return { kind: 'not_allowed' };
  let moved: string | undefined;
  const outcome = await deps.database.transaction(async (tx): Promise<WakeOutcome> => {
    const at = deps.clock.now();
    const agent = await repo.findAgent(tx, agentId);
    if (!agent) return { kind: 'not_allowed' };
    const key = agentGatewayKey(deps.hmacKey, agent.id, agent.tokenGen);
    const claim = { agentId: agent.id, gen: agent.tokenGen, nowSeconds: at.getTime() / 1000 };
    const allowed =
      'port' in proof || cookies.some((cookie) => checkGatewayCookie(key, claim, cookie));
    if (!allowed) return { kind: 'not_allowed' };
    // Another visit's wake got there first: nothing more to do.
    if (MOVES.start.via === agent.state) return { kind: 'starting' };
    const context = { jobs: deps.jobs, machine: AGENT, at, userId: null };
    try {
      await applyMove(tx, context, agent, 'start', {
        notCloning: MOVES.start.refusedWhileCloning,
      });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      // Another visit's wake moved it first: this one waits for the same start.
      const now = await repo.findAgent(tx, agentId);
      if (now && MOVES.start.via === now.state) return { kind: 'starting' };
      return { kind: 'refused', reason: error.detail ?? error.message };
    }
    await recordAuditEvent(
      tx,
      {
        accountId: agent.accountId,
        actorUserId: null,
        action: 'agent.wake',
        resourceKind: 'agent',
        resourceId: agent.id,
        data: { stoppedReason: agent.stoppedReason, ...('port' in proof && { port: proof.port }) },
      },
      at,
    );
    moved = agent.subdomain;
    return { kind: 'starting' };
  });
  // After the commit: a request resolving the route now reads the new state.
  if (moved) deps.forgetRoute?.(moved);
  return outcome;
}
