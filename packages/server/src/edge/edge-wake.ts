import type { IncomingMessage } from 'node:http';
import type { MachineState } from '@svc/contract';
import type { VisitProof, WakeOutcome } from '../agents/wake-on-visit.js';
import { type EdgePage, notRunning, starting, wakeRefused } from './edge-pages.js';

/** States an Agent passes through on its way to `running`: its page waits for it. */
const ON_THE_WAY_UP: ReadonlySet<MachineState> = new Set([
  'provisioning',
  'starting',
  'restarting',
]);

/** Starts a stopped Agent for a visit that may open it (`AgentsService.wake`). */
export type Wake = (agentId: string, proof: VisitProof) => Promise<WakeOutcome>;

/** What the edge does with a request for an Agent that is not running. */
export type WakeAnswer =
  | { readonly page: EdgePage }
  /** To the dashboard, which signs the person in and starts the Agent (`?open=1`). */
  | { readonly redirect: string };

/**
 * A person's browser navigating to a page, not a script, a tool or the editor's sockets. Browsers
 * say so themselves (`Sec-Fetch-Mode`, which no script may set): a `fetch` from another page of
 * the Agents' domain, whatever its `Accept`, is no visit.
 */
const isPageVisit = (req: IncomingMessage) => {
  const mode = req.headers['sec-fetch-mode'];
  return (
    req.method === 'GET' &&
    (req.headers.accept ?? '').includes('text/html') &&
    (mode === undefined || mode === 'navigate')
  );
};

/**
 * Wake on visit. A page visit to a stopped Agent starts it when the browser holds the Agent's
 * gateway cookie from an earlier visit, and gets a page that reloads until the Agent runs (then
 * the gateway answers it). A browser without that cookie goes to the dashboard's Open, which
 * signs the person in and starts the Agent if they may. An Agent on its way up gets the same
 * waiting page; in any other state, and for anything but a page visit, the page says the state.
 */
export async function answerNotRunning(
  req: IncomingMessage,
  agent: { readonly agentId: string; readonly state: MachineState },
  options: {
    /** The start, bound to what this visit shows (its cookie, or its admitted port). */
    readonly wake?: ((agentId: string) => Promise<WakeOutcome>) | undefined;
    readonly dashboardUrl: string;
  },
): Promise<WakeAnswer> {
  if (!isPageVisit(req)) return { page: notRunning(agent.state) };
  if (ON_THE_WAY_UP.has(agent.state)) return { page: starting(agent.state) };
  if (agent.state !== 'stopped' || !options.wake) return { page: notRunning(agent.state) };
  const outcome = await options.wake(agent.agentId);
  if (outcome.kind === 'starting') return { page: starting('starting') };
  if (outcome.kind === 'refused') return { page: wakeRefused(outcome.reason) };
  return { redirect: `${options.dashboardUrl}agents/${agent.agentId}?open=1` };
}
