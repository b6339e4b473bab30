import { type KeyObject, randomBytes } from 'node:crypto';
import type { GatewayCa } from '../../../crypto/gateway-ca.js';
import type { Logger } from '../../../logger.js';
import type { ServerInfo } from '../compute-driver.js';
import {
  addressOf,
  awaitGateway,
  enrollKeyOf,
  type GatewayAddress,
  gatewayExchange,
  pushToGateway,
} from './gateway-exchange.js';
import { pushHomeSeed } from './hetzner-home-seed.js';

/** Agents' gateway certificates are looked at this often, and renewed within their last days. */
const RENEW_CHECK_MS = 6 * 60 * 60_000;
const RENEW_BEFORE_MS = 10 * 24 * 60 * 60_000;

export interface HetznerGatewayKeys {
  /** The authority of the TLS path to gateways; without it no Agent is enrolled. */
  readonly gatewayCa?: GatewayCa | undefined;
  /** Signs pushes (`agent-env-push`). */
  readonly pushKey?: KeyObject | undefined;
  /** What the machines' one-time enrollment keys are derived from (`enrollSecretOf`). */
  readonly enrollSecret?: Buffer | undefined;
  /** How long a server may take to boot until its gateway answers. */
  readonly waitMs: number;
}

/** Where each machine's enrolled gateway key (`keyFingerprint`) is recorded: its server. */
export interface GatewayPins {
  read(machineId: string): Promise<string | undefined>;
  record(machineId: string, fingerprint: string): Promise<void>;
}

/**
 * The hetzner driver's way into its Agents' servers: their gateways, over TLS (see
 * `@svc/contract/gateway-tls` and `gateway-exchange.ts`). The first push enrolls the machine's
 * key and brings its first token; every later one renews its certificate.
 */
export class HetznerGateways {
  #renewedAt = 0;

  constructor(
    readonly keys: HetznerGatewayKeys,
    readonly pins: GatewayPins,
    readonly log: Logger,
  ) {}

  /** Whether Agents get their gateway's certificate and token (a CA is configured). */
  get enabled(): boolean {
    return this.keys.gatewayCa !== undefined;
  }

  /**
   * The user data's enrollment key for machine `id`. Without a CA nothing is enrolled, so the
   * key is never asked for and a random one does; with a CA it must come from the secret, or
   * anyone could compute it.
   */
  enrollKey(id: string): string {
    const { enrollSecret, gatewayCa } = this.keys;
    if (enrollSecret) return enrollKeyOf(enrollSecret, id);
    if (!gatewayCa) return randomBytes(32).toString('base64url');
    throw new Error('the hetzner driver has a gateway CA but no enrollment secret (enrollSecret)');
  }

  /**
   * Pushes `env` with a certificate for the gateway's key, once the gateway answers: the first
   * time (`enroll`) to the key that proves to be the machine's, which is pinned on its server;
   * later (and on a retry of the first, the enrollment key being forgotten by then) only to the
   * pinned key, even when another key shows a certificate of the CA for the machine.
   */
  async push(server: ServerInfo, env: Readonly<Record<string, string>>, how: { enroll: boolean }) {
    const { gatewayCa, pushKey } = this.#keys();
    const gateway = gatewayOf(server);
    const pin = await this.pins.read(server.id);
    const enrollKey = how.enroll && !pin ? this.enrollKey(server.id) : undefined;
    await awaitGateway(
      () =>
        pushToGateway({
          ca: gatewayCa,
          pushKey,
          gateway,
          env,
          enrollKey,
          pin,
          enrolled: how.enroll,
          onKey: (fingerprint) => this.pins.record(server.id, fingerprint),
        }),
      addressOf(gateway),
      this.keys.waitMs,
    );
  }

  /** New credentials for a running Agent, with a renewed certificate, at once (no waiting). */
  async pushNow(server: ServerInfo, env: Readonly<Record<string, string>>): Promise<void> {
    const { gatewayCa, pushKey } = this.#keys();
    await pushToGateway({
      ca: gatewayCa,
      pushKey,
      gateway: gatewayOf(server),
      env,
      pin: await this.pins.read(server.id),
      onKey: (fingerprint) => this.pins.record(server.id, fingerprint),
    });
  }

  /** An adopted home, brought in through the running server's (enrolled) gateway. */
  async seedHome(server: ServerInfo, seedDir: string): Promise<void> {
    const { gatewayCa, pushKey } = this.#keys();
    const gateway = gatewayOf(server);
    const pin = await this.pins.read(server.id);
    await pushHomeSeed({ agentId: server.id, gateway, ca: gatewayCa, pushKey, seedDir, pin });
  }

  /**
   * A running Agent left alone for weeks (no start, no new token) would outlive its gateway
   * certificate: every few hours those ending within ten days get a new one (`serial`: one
   * change per machine at a time). A gateway that does not answer is left for the next pass.
   */
  async renewDue(
    agents: readonly ServerInfo[],
    serial: (id: string, work: () => Promise<void>) => Promise<void>,
  ): Promise<void> {
    const { gatewayCa } = this.keys;
    if (!gatewayCa || Date.now() - this.#renewedAt < RENEW_CHECK_MS) return;
    this.#renewedAt = Date.now();
    for (const server of agents.filter((info) => info.status === 'running' && info.gateway)) {
      await serial(server.id, async () => {
        const gateway = gatewayOf(server);
        const health = { method: 'GET', path: '/_svc/health', timeoutMs: 10_000 };
        const check = { kind: 'machine', pin: await this.pins.read(server.id) } as const;
        const { validTo } = await gatewayExchange(gatewayCa, gateway, check, health);
        if (validTo.getTime() - Date.now() > RENEW_BEFORE_MS) return;
        await this.pushNow(server, {});
      }).catch((err: unknown) =>
        this.log.warn({ err, machineId: server.id }, 'gateway certificate not renewed'),
      );
    }
  }

  #keys(): { gatewayCa: GatewayCa; pushKey: KeyObject } {
    const { gatewayCa, pushKey } = this.keys;
    if (!gatewayCa || !pushKey) throw new Error('the hetzner driver has no gateway CA or push key');
    return { gatewayCa, pushKey };
  }
}

function gatewayOf(server: ServerInfo): GatewayAddress {
  if (!server.gateway) throw new Error(`machine ${server.id} has no gateway`);
  return { machineId: server.id, host: server.gateway.host, port: server.gateway.port };
}
