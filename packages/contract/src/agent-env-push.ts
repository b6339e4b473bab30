import {
  createPrivateKey,
  createPublicKey,
  hkdfSync,
  type KeyObject,
  sign,
  verify,
} from 'node:crypto';

/**
 * New credentials for a running Agent, pushed by the service to the Agent's gateway where the
 * driver cannot write into the machine (a cloud server): `POST /_svc/agent-env`, the body signed
 * with the service's Ed25519 push key. The machine holds only the public half (`SVC_PUSH_KEY` in
 * its `agent.env`, given at its first boot), so neither the machine nor anyone who learnt an
 * Agent's token can push: a leaked token is replaced by one its holder never sees. A push names
 * its Agent and a time; the gateway takes it only within five minutes and only newer than the
 * last one it took (`SVC_PUSHED_AT`), so an old push cannot be replayed.
 *
 * Lives outside the package's index: it needs `node:crypto`, and the dashboard never signs.
 */

export const ENV_PUSH_PATH = '/_svc/agent-env';
export const ENV_PUSH_SIGNATURE_HEADER = 'x-svc-signature';
/** What a push may change; the Agent's id and the push key itself never change this way. */
export const PUSHABLE_KEYS = [
  'SVC_API_URL',
  'SVC_PUBLIC_URL',
  'SVC_HMAC_TOKEN',
  'SVC_GATEWAY_SECURE_COOKIES',
];
export const ENV_PUSH_MAX_AGE_MS = 5 * 60_000;

export interface EnvPush {
  readonly agentId: string;
  /** Milliseconds since the epoch, when the service signed it. */
  readonly issuedAt: number;
  readonly env: Readonly<Record<string, string>>;
  /**
   * A new certificate for the gateway's own key (PEM, signed by the service's CA; see
   * `gateway-tls`): the first one after enrollment, a renewed one after.
   */
  readonly gatewayCert?: string;
}

/** PKCS #8 DER of an Ed25519 private key, before its 32-byte seed. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The service's push key, derived from its HMAC key (no second secret to keep). */
export function pushPrivateKey(hmacKey: Buffer): KeyObject {
  const seed = Buffer.from(hkdfSync('sha256', hmacKey, Buffer.alloc(0), 'svc-env-push-v1', 32));
  return createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
}

/** The public half as machines get it: the raw 32 bytes, base64url. */
export function pushPublicKey(hmacKey: Buffer): string {
  const jwk = createPublicKey(pushPrivateKey(hmacKey)).export({ format: 'jwk' });
  return jwk.x as string;
}

/** The request body and its signature. */
export function signEnvPush(key: KeyObject, push: EnvPush): { body: string; signature: string } {
  const body = JSON.stringify(push);
  return { body, signature: sign(null, Buffer.from(body), key).toString('base64url') };
}

/**
 * The push in `body` when its signature is the push key's, it names `agentId`, it is at most
 * five minutes old and newer than `lastPushedAt`; otherwise why not, as a short reason.
 */
export function openEnvPush(
  body: string,
  signature: string | undefined,
  machine: { readonly pushKey: string; readonly agentId: string; readonly lastPushedAt: number },
  now: number,
): EnvPush | string {
  if (!isSigned(body, signature, machine.pushKey)) return 'bad signature';
  const push = JSON.parse(body) as EnvPush;
  if (push.agentId !== machine.agentId) return 'another Agent';
  if (typeof push.issuedAt !== 'number' || Math.abs(now - push.issuedAt) > ENV_PUSH_MAX_AGE_MS)
    return 'too old';
  if (push.issuedAt <= machine.lastPushedAt) return 'not newer than the last push';
  return push;
}

/** Whether `signature` is the push key's over `text`. */
function isSigned(text: string, signature: string | undefined, pushKey: string): boolean {
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: pushKey }, format: 'jwk' });
    return verify(null, Buffer.from(text), key, Buffer.from(signature ?? '', 'base64url'));
  } catch {
    return false;
  }
}

/**
 * An adopted Agent's home, pushed once to the gateway of a machine whose disk the driver cannot
 * write before it boots (a cloud server): `POST /_svc/home-seed`, the body a gzipped tarball of
 * the home, the claim (Agent, time, the tarball's SHA-256 and size) signed with the push key and
 * sent as a header, so the gateway knows what to expect before it reads a byte.
 */
export const HOME_SEED_PATH = '/_svc/home-seed';
export const HOME_SEED_CLAIM_HEADER = 'x-svc-seed';
/** The bundle's compressed tarball cap, and room for `bundle.json` and the credentials. */
export const HOME_SEED_MAX_BYTES = 510 * 1000 * 1000;

export interface HomeSeedClaim {
  readonly agentId: string;
  readonly issuedAt: number;
  readonly sha256: string;
  readonly size: number;
}

/** The claim header's value and its signature. */
export function signHomeSeed(
  key: KeyObject,
  claim: HomeSeedClaim,
): { claim: string; signature: string } {
  const text = Buffer.from(JSON.stringify(claim)).toString('base64url');
  return { claim: text, signature: sign(null, Buffer.from(text), key).toString('base64url') };
}

/** The claim when the push key signed it for `agentId` within five minutes; else why not. */
export function openHomeSeed(
  claim: string | undefined,
  signature: string | undefined,
  machine: { readonly pushKey: string; readonly agentId: string },
  now: number,
): HomeSeedClaim | string {
  if (!claim || !isSigned(claim, signature, machine.pushKey)) return 'bad signature';
  const opened = JSON.parse(Buffer.from(claim, 'base64url').toString('utf8')) as HomeSeedClaim;
  if (opened.agentId !== machine.agentId) return 'another Agent';
  if (typeof opened.issuedAt !== 'number' || Math.abs(now - opened.issuedAt) > ENV_PUSH_MAX_AGE_MS)
    return 'too old';
  const sizeOk = Number.isSafeInteger(opened.size) && opened.size > 0;
  if (!/^[0-9a-f]{64}$/.test(String(opened.sha256)) || !sizeOk || opened.size > HOME_SEED_MAX_BYTES)
    return 'not a home seed';
  return opened;
}
