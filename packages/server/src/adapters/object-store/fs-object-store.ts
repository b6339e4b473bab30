import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { link, mkdir, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Hono } from 'hono';
import type { AppEnv } from '../../http/app-env.js';
import type { Clock } from '../clock.js';
import { mountFsUploads } from './fs-upload-route.js';
import {
  type CommitResult,
  type ObjectStore,
  objectKey,
  SHA256_HEX,
  UPLOAD_ID,
  type UploadTarget,
  type UploadTicket,
} from './object-store.js';
import { deriveUploadKey, signUpload, verifyUploadSignature } from './upload-signature.js';

/** The path the service answers fs uploads on (outside the contract: the body is raw bytes). */
export const FS_UPLOAD_PATH = '/api/objects/uploads';

/** Why an fs upload was refused: a bad or expired URL, or bytes that are not the declared ones. */
export type ReceiveResult = 'stored' | 'forbidden' | 'mismatch';

/**
 * The embedded store: objects are files under `root/sha256/ab/<hash>`, written only after their
 * bytes were hashed on the way in, and linked into place so an existing object is never
 * overwritten. Uploads arrive at the service itself through HMAC-signed, expiring URLs.
 */
export class FsObjectStore implements ObjectStore {
  readonly kind = 'fs';
  readonly #uploadKey: Buffer;

  constructor(
    readonly root: string,
    readonly publicUrl: string,
    hmacKey: Buffer,
    readonly clock: Clock,
  ) {
    this.#uploadKey = deriveUploadKey(hmacKey);
  }

  async uploadUrl(ticket: UploadTicket): Promise<UploadTarget> {
    const signed = { ...ticket, expiresAt: Math.floor(ticket.expiresAt.getTime() / 1000) };
    const query = new URLSearchParams({
      sha256: ticket.sha256,
      size: String(ticket.size),
      exp: String(signed.expiresAt),
      sig: signUpload(this.#uploadKey, signed),
    });
    return {
      url: `${this.publicUrl}${FS_UPLOAD_PATH}/${ticket.uploadId}?${query}`,
      headers: { 'content-type': 'application/octet-stream' },
    };
  }

  /** Checks an upload URL's signature and expiry, then stores the body if its bytes match. */
  async receive(
    uploadId: string,
    query: Readonly<Record<string, string | undefined>>,
    body: ReadableStream<Uint8Array> | null,
  ): Promise<ReceiveResult> {
    const { sha256 = '', size: rawSize = '', exp = '', sig = '' } = query;
    const size = Number(rawSize);
    const expiresAt = Number(exp);
    if (!UPLOAD_ID.test(uploadId) || !SHA256_HEX.test(sha256)) return 'forbidden';
    if (!Number.isSafeInteger(size) || !Number.isSafeInteger(expiresAt)) return 'forbidden';
    const signed = { uploadId, sha256, size, expiresAt };
    if (!verifyUploadSignature(this.#uploadKey, signed, sig)) return 'forbidden';
    if (expiresAt * 1000 <= this.clock.now().getTime()) return 'forbidden';
    // An empty upload (an empty file) may arrive without a body at all.
    return this.#write(sha256, size, body ? Readable.fromWeb(body as never) : Readable.from([]));
  }

  async #write(sha256: string, size: number, body: Readable): Promise<ReceiveResult> {
    const tmpDir = path.join(this.root, 'tmp');
    await mkdir(tmpDir, { recursive: true });
    const tmp = path.join(tmpDir, randomUUID());
    const hash = createHash('sha256');
    let received = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        received += chunk.length;
        // Stop reading as soon as the body is longer than declared.
        if (received > size) return done(new Error('body longer than declared'));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(body, meter, createWriteStream(tmp, { flags: 'wx' }));
      if (received !== size || hash.digest('hex') !== sha256) return 'mismatch';
      const target = this.#path(sha256);
      await mkdir(path.dirname(target), { recursive: true });
      await link(tmp, target).catch((error: NodeJS.ErrnoException) => {
        // Same name, same bytes: the object was already there.
        if (error.code !== 'EEXIST') throw error;
      });
      return 'stored';
    } catch (error) {
      if (received > size) return 'mismatch';
      throw error;
    } finally {
      await unlink(tmp).catch(() => {});
    }
  }

  async commitUpload(ticket: { sha256: string; size: number }): Promise<CommitResult> {
    // Only verified bytes ever reach their hash's name, so the name and size are proof enough.
    const found = await this.stat(ticket.sha256);
    if (!found) return 'missing';
    return found.size === ticket.size ? 'stored' : 'mismatch';
  }

  async discardUpload(): Promise<void> {
    // Uploads land under their hash at once (after the hash check): nothing waits elsewhere.
  }

  async stat(sha256: string): Promise<{ size: number } | undefined> {
    if (!SHA256_HEX.test(sha256)) return undefined;
    const info = await stat(this.#path(sha256)).catch(() => undefined);
    return info?.isFile() ? { size: info.size } : undefined;
  }

  async read(sha256: string): Promise<Readable | undefined> {
    if (!(await this.stat(sha256))) return undefined;
    return createReadStream(this.#path(sha256));
  }

  async delete(sha256: string): Promise<void> {
    if (SHA256_HEX.test(sha256)) await rm(this.#path(sha256), { force: true });
  }

  /** Its upload URLs are served by the service itself. */
  mount(app: Hono<AppEnv>): void {
    mountFsUploads(app, this);
  }

  async close(): Promise<void> {}

  #path(sha256: string): string {
    return path.join(this.root, objectKey(sha256));
  }
}
