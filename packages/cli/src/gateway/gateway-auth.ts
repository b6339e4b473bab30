import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  checkGatewayCookie,
  checkGatewayTicket,
  GATEWAY_COOKIE,
  gatewayKeyFromToken,
  issueGatewayCookie,
  readCookieValues,
  type TicketCheck,
} from '@svc/contract/gateway-ticket';
import { loadAgentCredentials } from '../agent-env.js';

/** Spent ticket nonces, in the home, so a restarted gateway still refuses a used ticket. */
export const SPENT_TICKETS_FILE = '.crabglamp/gateway-spent-tickets.json';

/**
 * Who may use this Agent's gateway: a browser with a valid single-use ticket (handed out by the
 * service to members of the Agent's account), then with the cookie the gateway sets for it. Spent
 * tickets are remembered in the home until they expire, across restarts of the gateway. The
 * key comes from the Agent's current token, read afresh each time, so a new token (transfer,
 * regenerate) turns every older ticket and cookie away.
 */
export class GatewayAuth {
  /** Nonces of tickets already used, until they would have expired anyway. */
  readonly #used = new Map<string, number>();
  #loaded: Promise<void> | undefined;

  constructor(
    readonly env: Readonly<Record<string, string | undefined>>,
    readonly nowSeconds: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  /**
   * The file first: a running process's environment keeps the token it started with, while the
   * platform replaces `agent.env` when the token changes.
   */
  async #identity() {
    const credentials =
      (await loadAgentCredentials({ HOME: this.env.HOME })) ??
      (await loadAgentCredentials(this.env));
    return credentials && gatewayKeyFromToken(credentials.hmacToken);
  }

  /** Checks and spends a ticket; on success, the cookie value to set. */
  async redeemTicket(
    ticket: string,
  ): Promise<
    | { ok: true; cookie: string }
    | Extract<TicketCheck, { ok: false }>
    | { ok: false; reason: 'reused' | 'no_token' }
  > {
    const identity = await this.#identity();
    if (!identity) return { ok: false, reason: 'no_token' };
    const now = this.nowSeconds();
    const claim = { agentId: identity.agentId, gen: identity.gen, nowSeconds: now };
    const check = checkGatewayTicket(identity.key, claim, ticket);
    if (!check.ok) return check;
    this.#loaded ??= this.#loadSpent();
    await this.#loaded;
    this.#forgetExpired(now);
    // Checked and marked with no await between: two requests with one ticket can't both pass.
    if (this.#used.has(check.nonce)) return { ok: false, reason: 'reused' };
    this.#used.set(check.nonce, check.expiresAtSeconds);
    await this.#saveSpent();
    return { ok: true, cookie: issueGatewayCookie(identity.key, claim) };
  }

  #spentFile(): string | undefined {
    return this.env.HOME ? path.join(this.env.HOME, SPENT_TICKETS_FILE) : undefined;
  }

  /** A missing or unreadable file means nothing was spent that is still worth remembering. */
  async #loadSpent() {
    const file = this.#spentFile();
    if (!file) return;
    const saved: unknown = await readFile(file, 'utf8')
      .then((text) => JSON.parse(text))
      .catch(() => ({}));
    if (typeof saved !== 'object' || saved === null) return;
    for (const [nonce, expiresAt] of Object.entries(saved))
      if (typeof expiresAt === 'number') this.#used.set(nonce, expiresAt);
  }

  /** Written whole and renamed into place, so a crash leaves the old list or the new one. */
  async #saveSpent() {
    const file = this.#spentFile();
    if (!file) return;
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, JSON.stringify(Object.fromEntries(this.#used)), { mode: 0o600 });
    await rename(temporary, file);
  }

  /**
   * Whether the request's `Cookie` header carries a valid gateway cookie. Every cookie of that
   * name counts: one planted by a sibling subdomain must not shadow the real one.
   */
  async isAuthorized(cookieHeader: string | undefined, name = GATEWAY_COOKIE): Promise<boolean> {
    const values = readCookieValues(cookieHeader, name);
    if (values.length === 0) return false;
    const identity = await this.#identity();
    if (!identity) return false;
    const claim = { agentId: identity.agentId, gen: identity.gen, nowSeconds: this.nowSeconds() };
    return values.some((value) => checkGatewayCookie(identity.key, claim, value));
  }

  #forgetExpired(now: number) {
    for (const [nonce, expiresAt] of this.#used) if (expiresAt <= now) this.#used.delete(nonce);
  }
}
