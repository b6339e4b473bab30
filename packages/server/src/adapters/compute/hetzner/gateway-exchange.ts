import {
  createHash,
  createHmac,
  createPublicKey,
  hkdfSync,
  type KeyObject,
  X509Certificate,
} from 'node:crypto';
import { request } from 'node:http';
import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import { connect, type TLSSocket } from 'node:tls';
import {
  ENV_PUSH_PATH,
  ENV_PUSH_SIGNATURE_HEADER,
  signEnvPush,
} from '@svc/contract/agent-env-push';
import { ENROLL_PROOF_PATH, enrollProof, gatewayServerName } from '@svc/contract/gateway-tls';
import type { GatewayCa } from '../../../crypto/gateway-ca.js';
import { connectRetrying } from '../../../util/connect-retrying.js';
import { sleep } from './hcloud-client.js';

/** Where a machine's gateway listens, and which machine it must be. */
export interface GatewayAddress {
  readonly machineId: string;
  readonly host: string;
  readonly port: number;
}

/**
 * Who the gateway must prove to be: `machine`, a certificate of the service's CA naming the
 * machine (whatever its dates: renewing an expired one still needs the machine's key); `any`,
 * any certificate (enrollment, where the proof decides). `pin`: and exactly the public key with
 * this fingerprint (`keyFingerprint`).
 */
export type GatewayCheck = { readonly kind: 'machine' | 'any'; readonly pin?: string | undefined };

/**
 * A gateway key's pin: the SHA-256 of its DER SPKI, in base 36 (50 characters, letters and digits
 * only: it fits a Hetzner label value, which takes 63 at most and no `+`, `/` or `=`).
 */
export const keyFingerprint = (spkiDer: Buffer): string =>
  BigInt(`0x${createHash('sha256').update(spkiDer).digest('hex')}`)
    .toString(36)
    .padStart(50, '0');

export interface GatewayAnswer {
  readonly status: number;
  readonly body: string;
  /** The gateway's public key (DER SPKI), as its handshake showed it. */
  readonly spki: Buffer;
  /** When the certificate it showed ends. */
  readonly validTo: Date;
}

/**
 * One request to a cloud machine's gateway over TLS: the service's client certificate shown,
 * the gateway's certificate checked as `check` says before a byte of the request is sent.
 */
export async function gatewayExchange(
  ca: GatewayCa,
  gateway: GatewayAddress,
  check: GatewayCheck,
  call: {
    method: string;
    path: string;
    headers?: Record<string, string>;
    body?: string | Readable;
    timeoutMs: number;
  },
): Promise<GatewayAnswer> {
  const client = await ca.serviceClient();
  // A moment's missing route to the machine is tried again; nothing is sent before this.
  const connected = await connectRetrying({
    host: gateway.host,
    port: gateway.port,
    timeoutMs: 10_000,
  });
  const socket = await new Promise<TLSSocket>((resolve, reject) => {
    const tls = connect({
      socket: connected,
      servername: gatewayServerName(gateway.machineId),
      ca: ca.cert,
      cert: client.cert,
      key: client.key,
      minVersion: 'TLSv1.3',
      // Checked below, by `check`: Node's own check would refuse an enrolling machine's
      // self-signed certificate and an expired one that a renewal replaces.
      rejectUnauthorized: false,
    });
    // On a given socket, `tls.connect` leaves its `timeout` option unset.
    tls.setTimeout(10_000);
    tls.once('secureConnect', () => {
      // From here the request's own timeout applies (a home's upload may take minutes).
      tls.setTimeout(0);
      resolve(tls);
    });
    tls.once('timeout', () => tls.destroy(new Error('the gateway did not answer in time')));
    tls.once('error', reject);
  });
  const raw = socket.getPeerCertificate().raw;
  const peer = raw && new X509Certificate(raw);
  const spki = peer?.publicKey.export({ type: 'spki', format: 'der' });
  const refused =
    !peer || !spki
      ? 'showed no certificate'
      : check.kind === 'machine' && !ca.vouchesFor(peer, gateway.machineId)
        ? `showed a certificate that is not the service's for machine ${gateway.machineId}`
        : check.pin && check.pin !== keyFingerprint(spki)
          ? `showed another key than the one enrolled for machine ${gateway.machineId} (refused until it enrolls anew)`
          : undefined;
  if (refused || !spki || !peer) {
    socket.destroy();
    throw new Error(`the gateway at ${addressOf(gateway)} ${refused}`);
  }
  return new Promise<GatewayAnswer>((resolve, reject) => {
    const req = request(
      {
        createConnection: () => socket,
        method: call.method,
        path: call.path,
        headers: { host: gatewayServerName(gateway.machineId), ...call.headers },
        timeout: call.timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          socket.destroy();
          const body = Buffer.concat(chunks).toString();
          resolve({ status: res.statusCode ?? 0, body, spki, validTo: new Date(peer.validTo) });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('the gateway did not answer in time')));
    req.on('error', (error) => {
      socket.destroy();
      reject(error);
    });
    if (typeof call.body === 'string' || call.body === undefined) req.end(call.body);
    else call.body.pipe(req);
  });
}

/**
 * Tries `attempt` until it succeeds or `waitMs` has passed: a server still booting refuses or
 * drops connections, and a clone may still serve its source's key and enrollment key until its
 * first boot has made its own. Then the last failure is said.
 */
export async function awaitGateway<T>(
  attempt: () => Promise<T>,
  address: string,
  waitMs: number,
): Promise<T> {
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > until) {
        throw new Error(
          `the gateway at ${address} was not ready in time: ${(error as Error).message}`,
        );
      }
      await sleep(3_000);
    }
  }
}

/** The secret the per-machine enrollment keys are derived from (from the HMAC key). */
export const enrollSecretOf = (hmacKey: Buffer): Buffer =>
  Buffer.from(hkdfSync('sha256', hmacKey, Buffer.alloc(0), 'svc-gateway-enroll-v1', 32));

/** A machine's one-time enrollment key (`SVC_ENROLL_KEY`), base64url. */
export const enrollKeyOf = (secret: Buffer, machineId: string): string =>
  createHmac('sha256', secret).update(machineId).digest('base64url');

/**
 * Hands a machine's gateway a certificate for its own key and, with it, `env` (the Agent's
 * token, after enrollment the first one): signed with the push key, over TLS to that key only.
 * `enrollKey`: a first contact, where the gateway's key is taken only with its enrollment proof,
 * and `onKey` records it (the pin) before anything is pushed to it. `pin`: the key enrolled
 * before, which the gateway must show, with the CA's certificate for the machine (or, `enrolled`
 * but maybe without its certificate yet, a lost first push, any). Neither: a machine enrolled
 * before keys were pinned, whose key the CA's certificate names is pinned now (`onKey`).
 */
export async function pushToGateway(options: {
  readonly ca: GatewayCa;
  readonly pushKey: KeyObject;
  readonly gateway: GatewayAddress;
  readonly env: Readonly<Record<string, string>>;
  readonly enrollKey?: string | undefined;
  readonly pin?: string | undefined;
  readonly enrolled?: boolean;
  readonly onKey?: (fingerprint: string) => Promise<void>;
}): Promise<void> {
  const { ca, gateway, pin } = options;
  const enrollKey = pin ? undefined : options.enrollKey;
  const kind = enrollKey || (pin && options.enrolled) ? 'any' : 'machine';
  const first = await gatewayExchange(
    ca,
    gateway,
    { kind, pin },
    { method: 'GET', path: enrollKey ? ENROLL_PROOF_PATH : '/_svc/health', timeoutMs: 10_000 },
  );
  if (enrollKey) {
    const proof = (JSON.parse(first.body || '{}') as { proof?: string }).proof;
    if (first.status !== 200 || proof !== enrollProof(enrollKey, first.spki)) {
      throw new Error(
        `the gateway at ${addressOf(gateway)} did not prove to be machine ${gateway.machineId}`,
      );
    }
  }
  const fingerprint = keyFingerprint(first.spki);
  if (!pin) await options.onKey?.(fingerprint);
  const publicKey = createPublicKey({ key: first.spki, format: 'der', type: 'spki' });
  const gatewayCert = await ca.issueMachineCert(gateway.machineId, publicKey);
  const { body, signature } = signEnvPush(options.pushKey, {
    agentId: gateway.machineId,
    issuedAt: Date.now(),
    env: options.env,
    gatewayCert,
  });
  const answer = await gatewayExchange(
    ca,
    gateway,
    { kind, pin: fingerprint },
    {
      method: 'POST',
      path: ENV_PUSH_PATH,
      headers: { 'content-type': 'application/json', [ENV_PUSH_SIGNATURE_HEADER]: signature },
      body,
      timeoutMs: 10_000,
    },
  );
  if (answer.status !== 204) {
    throw new Error(`Agent ${gateway.machineId}'s gateway refused the push: ${answer.status}`);
  }
}

export const addressOf = (gateway: { host: string; port: number }): string =>
  `${isIP(gateway.host) === 6 ? `[${gateway.host}]` : gateway.host}:${gateway.port}`;
