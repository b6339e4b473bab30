import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { openEnvPush, PUSHABLE_KEYS } from '@svc/contract/agent-env-push';
import { ENROLL_KEY_VARIABLE } from '@svc/contract/gateway-tls';
import { AGENT_ENV_FILE, readAgentEnv } from '../agent-env.js';

/** What the gateway answers a push: 204 when taken, else the status and a short reason. */
export interface PushAnswer {
  readonly status: 204 | 403 | 404;
  readonly reason?: string;
}

/**
 * Takes the service's signed push of new credentials (see `@svc/contract/agent-env-push`) into
 * `~/.crabglamp/agent.env`, which the gateway and `svc` read afresh. One push at a time: the
 * newest one wins, an older one arriving later is refused.
 */
export class EnvPushes {
  #turn: Promise<unknown> = Promise.resolve();

  /**
   * `takeCert`: where a pushed certificate for the gateway goes (`GatewayTls.take`; answers why
   * it refuses one); a gateway without TLS refuses pushes that carry one.
   */
  constructor(
    private readonly home: string,
    private readonly takeCert?: (pem: string) => Promise<string | undefined>,
  ) {}

  take(body: string, signature: string | undefined, now = Date.now()): Promise<PushAnswer> {
    const turn = this.#turn.then(() => this.#take(body, signature, now));
    this.#turn = turn.catch(() => undefined);
    return turn;
  }

  async #take(body: string, signature: string | undefined, now: number): Promise<PushAnswer> {
    const current = await readAgentEnv(this.home);
    const { SVC_PUSH_KEY: pushKey, SVC_AGENT_ID: agentId } = current;
    if (!pushKey || !agentId) return { status: 404, reason: 'this machine takes no pushes' };
    let opened: ReturnType<typeof openEnvPush>;
    try {
      opened = openEnvPush(
        body,
        signature,
        { pushKey, agentId, lastPushedAt: Number(current.SVC_PUSHED_AT ?? 0) },
        now,
      );
    } catch {
      return { status: 403, reason: 'not a push' };
    }
    if (typeof opened === 'string') return { status: 403, reason: opened };
    // Pushes may arrive out of order: a token never goes back to an older generation.
    const pushedToken = opened.env.SVC_HMAC_TOKEN;
    if (pushedToken && generationOf(pushedToken) < generationOf(current.SVC_HMAC_TOKEN ?? '')) {
      return { status: 403, reason: 'an older token' };
    }
    if (opened.gatewayCert !== undefined) {
      const refused = this.takeCert
        ? await this.takeCert(String(opened.gatewayCert))
        : 'this gateway has no TLS';
      if (refused) return { status: 403, reason: `certificate refused: ${refused}` };
    }
    const next: Record<string, string> = { ...current, SVC_PUSHED_AT: String(opened.issuedAt) };
    // Enrolled: the one-time key is forgotten (it is read from this file only, never kept in
    // memory), so the user data that still holds it (the cloud's metadata service serves it to
    // any process on the machine, for the server's life) proves nothing from now on.
    delete next[ENROLL_KEY_VARIABLE];
    for (const key of PUSHABLE_KEYS) {
      const value = opened.env[key];
      // Values become lines of a KEY=value file: one line each.
      if (typeof value === 'string' && !/[\r\n]/.test(value)) next[key] = value;
    }
    const file = path.join(this.home, AGENT_ENV_FILE);
    const partial = `${file}.push-${process.pid}`;
    const text = Object.entries(next)
      .map(([key, value]) => `${key}=${value}\n`)
      .join('');
    await writeFile(partial, text, { mode: 0o600 });
    await rename(partial, file);
    return { status: 204 };
  }
}

/** The generation in an Agent token `svc1.<agentId>.<generation>.<mac>`; 0 when unreadable. */
function generationOf(token: string): number {
  const generation = Number(token.split('.')[2]);
  return Number.isSafeInteger(generation) ? generation : 0;
}
