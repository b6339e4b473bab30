import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { readFile, rename, stat, writeFile } from 'node:fs/promises';
import type { ServerOptions } from 'node:https';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import {
  enrollProof,
  GATEWAY_TLS_DIR,
  GATEWAY_TLS_FILES,
  SERVICE_CLIENT_NAME,
} from '@svc/contract/gateway-tls';

interface TlsFiles {
  readonly ca: string;
  readonly key: string;
  readonly cert: string;
}

/** How often the certificate file is looked at (a driver may write a renewed one meanwhile). */
const RELOAD_CHECK_MS = 15_000;

/**
 * The gateway's TLS, on a cloud machine (see `@svc/contract/gateway-tls`): its key and
 * certificate, and the service's CA, which is the only authority for clients. A client must
 * hold the service's own certificate (`SERVICE_CLIENT_NAME`): a machine's certificate, signed by
 * the same CA, is refused (it is for servers only, and names no service).
 */
export class GatewayTls {
  #files: TlsFiles;
  #certChangedAt = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Called with the new context's options when the certificate changes. */
  onChange: ((options: TlsFiles) => void) | undefined;

  private constructor(
    readonly dir: string,
    files: TlsFiles,
  ) {
    this.#files = files;
  }

  /**
   * The home's TLS files; `undefined` when it has no CA certificate (a local driver's machine,
   * reached on loopback only: plain HTTP). A CA without key or certificate is an error.
   */
  static async load(home: string): Promise<GatewayTls | undefined> {
    const dir = path.join(home, GATEWAY_TLS_DIR);
    const ca = await readFile(path.join(dir, GATEWAY_TLS_FILES.ca), 'utf8').catch(() => undefined);
    if (ca === undefined) return undefined;
    const tls = new GatewayTls(dir, { ca, key: '', cert: '' });
    await tls.#reload().catch((error: Error) => {
      throw new Error(`the gateway's TLS files in ${dir} are incomplete: ${error.message}`);
    });
    return tls;
  }

  /** The HTTPS server's options: TLS 1.3, a client certificate of the service's CA required. */
  serverOptions(): ServerOptions {
    return { ...this.#files, requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.3' };
  }

  /** Whether the verified client of `socket` is the service (not a machine of the same CA). */
  isService(socket: TLSSocket): boolean {
    if (!socket.authorized) return false;
    const names = (socket.getPeerCertificate().subjectaltname ?? '').split(', ');
    return names.includes(`DNS:${SERVICE_CLIENT_NAME}`);
  }

  /** The enrollment proof over this gateway's own public key. */
  proof(enrollKey: string): string {
    const spki = createPublicKey(this.#files.key).export({ type: 'spki', format: 'der' });
    return enrollProof(enrollKey, spki);
  }

  /**
   * Takes a certificate the service pushed: it must be for this gateway's key and signed by the
   * CA; it replaces `cert.pem` and the server's context. Answers why not, or `undefined`.
   */
  async take(pem: string): Promise<string | undefined> {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(pem);
    } catch {
      return 'not a certificate';
    }
    if (!cert.checkPrivateKey(createPrivateKey(this.#files.key))) return 'not for this key';
    if (!cert.verify(new X509Certificate(this.#files.ca).publicKey)) return 'not signed by the CA';
    const file = path.join(this.dir, GATEWAY_TLS_FILES.cert);
    await writeFile(`${file}.new`, pem, { mode: 0o600 });
    await rename(`${file}.new`, file);
    await this.#reload();
    return undefined;
  }

  /** Follows `cert.pem` when something else (the Incus driver's file API) renews it. */
  watch(): void {
    this.#timer ??= setInterval(() => {
      void this.#reload().catch(() => {});
    }, RELOAD_CHECK_MS);
    this.#timer.unref();
  }

  close(): void {
    clearInterval(this.#timer);
  }

  async #reload(): Promise<void> {
    const certFile = path.join(this.dir, GATEWAY_TLS_FILES.cert);
    const changedAt = (await stat(certFile)).mtimeMs;
    if (changedAt === this.#certChangedAt) return;
    const [ca, key, cert] = await Promise.all(
      [GATEWAY_TLS_FILES.ca, GATEWAY_TLS_FILES.key, GATEWAY_TLS_FILES.cert].map((name) =>
        readFile(path.join(this.dir, name), 'utf8'),
      ),
    );
    const next = { ca: ca as string, key: key as string, cert: cert as string };
    // Checked before use: a key that does not fit its certificate would refuse every handshake.
    if (!new X509Certificate(next.cert).checkPrivateKey(createPrivateKey(next.key))) {
      throw new Error(`${certFile} is not the certificate of the gateway's key`);
    }
    this.#files = next;
    this.#certChangedAt = changedAt;
    this.onChange?.(next);
  }
}
