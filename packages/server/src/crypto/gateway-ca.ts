// @peculiar/x509 resolves its parsers through tsyringe, which needs the Reflect metadata API.
import 'reflect-metadata';
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  webcrypto,
  X509Certificate,
} from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { gatewayServerName, SERVICE_CLIENT_NAME } from '@svc/contract/gateway-tls';

/** ECDSA P-256 with SHA-256: every key and signature of the gateway path. */
const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 60 * 60_000;
/**
 * A machine's certificate lives this long; it is renewed at each start and each token push, and
 * the drivers' reconcile passes renew a running machine's in its last days.
 */
export const MACHINE_CERT_DAYS = 30;
/** The service's client certificate, made anew in each process once half of it has passed. */
const SERVICE_CERT_DAYS = 30;
/** Clocks of machines a little behind the service's still take a certificate made just now. */
const BACKDATE_MS = 5 * 60_000;

/** A key and its certificate, PEM. */
export interface TlsCredentials {
  readonly key: string;
  readonly cert: string;
}

/**
 * The service's authority over the path to its machines' gateways (see
 * `@svc/contract/gateway-tls`): it signs each machine's server certificate, naming the machine,
 * and the service's own client certificate. Both are for one purpose only (extended key usage),
 * so a machine cannot use its certificate to pass for the service.
 */
export class GatewayCa {
  readonly #key: KeyObject;
  #signingKey: Promise<webcrypto.CryptoKey> | undefined;
  #client: { credentials: Promise<TlsCredentials>; renewAt: number } | undefined;
  #current: TlsCredentials | undefined;

  constructor(
    /** The CA certificate, PEM: what gateways and the edge trust, and nothing else. */
    readonly cert: string,
    key: string,
  ) {
    this.#key = createPrivateKey(key);
  }

  /** A new CA (development: `DATA_DIR/gateway-ca.json`), valid ten years. */
  static async generate(): Promise<{ cert: string; key: string }> {
    const keys = (await webcrypto.subtle.generateKey(EC, true, [
      'sign',
      'verify',
    ])) as webcrypto.CryptoKeyPair;
    const now = Date.now();
    const cert = await x509.X509CertificateGenerator.createSelfSigned(
      {
        serialNumber: serial(),
        name: 'CN=svc gateway CA',
        notBefore: new Date(now - BACKDATE_MS),
        notAfter: new Date(now + 3650 * DAY_MS),
        // Node's WebCrypto keys, typed by Node's own lib rather than the DOM's the library names.
        keys: keys as never,
        signingAlgorithm: EC,
        extensions: [
          new x509.BasicConstraintsExtension(true, 0, true),
          new x509.KeyUsagesExtension(
            x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
            true,
          ),
        ],
      },
      webcrypto as unknown as Parameters<typeof x509.X509CertificateGenerator.create>[1],
    );
    const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
    const key = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
    return {
      cert: cert.toString('pem'),
      key: key.export({ type: 'pkcs8', format: 'pem' }) as string,
    };
  }

  /**
   * A server certificate naming `machineId` for `publicKey` (the machine's own key, as its
   * handshake showed it, or one made by `machineCredentials`), valid `MACHINE_CERT_DAYS`.
   */
  issueMachineCert(machineId: string, publicKey: KeyObject, days = MACHINE_CERT_DAYS) {
    return this.#issue({
      name: gatewayServerName(machineId),
      publicKey,
      days,
      usage: x509.ExtendedKeyUsage.serverAuth,
    });
  }

  /** A new key and its certificate for a machine whose disk the driver writes (Incus). */
  async machineCredentials(machineId: string, days?: number): Promise<TlsCredentials> {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    return {
      key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
      cert: await this.issueMachineCert(machineId, publicKey, days),
    };
  }

  /** The service's client certificate (`SERVICE_CLIENT_NAME`), made once per half its life. */
  serviceClient(now = Date.now()): Promise<TlsCredentials> {
    if (this.#client && now < this.#client.renewAt) return this.#client.credentials;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const credentials = this.#issue({
      name: SERVICE_CLIENT_NAME,
      publicKey,
      days: SERVICE_CERT_DAYS,
      usage: x509.ExtendedKeyUsage.clientAuth,
    }).then((cert) => {
      this.#current = { cert, key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
      return this.#current;
    });
    this.#client = { credentials, renewAt: now + (SERVICE_CERT_DAYS / 2) * DAY_MS };
    // A failure is not kept: the next call tries again.
    credentials.catch(() => {
      this.#client = undefined;
    });
    return credentials;
  }

  /**
   * The service's client certificate at once, for connections made synchronously (the edge's):
   * the last one made by `serviceClient`, which must have been awaited once; a due renewal is
   * started, and the current one (valid for half its life still) is used meanwhile.
   */
  clientCredentials(now = Date.now()): TlsCredentials {
    if (!this.#current) throw new Error('the gateway CA has made no client certificate yet');
    if (this.#client && now >= this.#client.renewAt) void this.serviceClient(now).catch(() => {});
    return this.#current;
  }

  /**
   * Whether `cert` (a gateway's, as its handshake showed it) is this CA's certificate for
   * `machineId`, whatever its dates: renewing an expired certificate still needs its key to be
   * the machine's.
   */
  vouchesFor(cert: X509Certificate, machineId: string): boolean {
    return (
      cert.checkIssued(new X509Certificate(this.cert)) &&
      cert.verify(createPublicKey(this.#key)) &&
      cert.checkHost(gatewayServerName(machineId), { wildcards: false }) !== undefined
    );
  }

  toJSON(): string {
    return '[gateway CA]';
  }

  async #issue(spec: {
    name: string;
    publicKey: KeyObject;
    days: number;
    usage: x509.ExtendedKeyUsage;
  }): Promise<string> {
    this.#signingKey ??= Promise.resolve(this.#key.toCryptoKey(EC, false, ['sign']));
    const now = Date.now();
    const spki = spec.publicKey.export({ type: 'spki', format: 'der' });
    const cert = await x509.X509CertificateGenerator.create(
      {
        serialNumber: serial(),
        subject: `CN=${spec.name}`,
        issuer: new x509.X509Certificate(this.cert).subject,
        notBefore: new Date(now - BACKDATE_MS),
        notAfter: new Date(now + spec.days * DAY_MS),
        publicKey: new Uint8Array(spki),
        signingKey: (await this.#signingKey) as never,
        signingAlgorithm: EC,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
          new x509.ExtendedKeyUsageExtension([spec.usage], false),
          new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: spec.name }], false),
        ],
      },
      webcrypto as unknown as Parameters<typeof x509.X509CertificateGenerator.create>[1],
    );
    return cert.toString('pem');
  }
}

/** A positive serial of 16 random bytes (the top bit cleared: DER integers are signed). */
function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] as number) & 0x7f;
  return bytes.toString('hex');
}
