import { createHash } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Clock } from '../clock.js';
import {
  type CommitResult,
  type ObjectStore,
  ObjectStoreUnavailable,
  objectKey,
  SHA256_HEX,
  type UploadTarget,
  type UploadTicket,
} from './object-store.js';

export interface S3StoreOptions {
  readonly bucket: string;
  readonly region: string;
  readonly endpoint?: string;
  readonly forcePathStyle: boolean;
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

const uploadKey = (uploadId: string) => `uploads/${uploadId}`;

const isNotFound = (error: unknown) => {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
};

/** Socket-level failures: the store is not there for us (the SDK has retried them already). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** Whether `error` says the store is out of reach or failing on its side, not that we erred. */
const isUnreachable = (error: unknown) => {
  const e = error as { name?: string; code?: string; $fault?: string };
  if (e.$fault === 'server') return true;
  return e.name === 'TimeoutError' || NETWORK_CODES.has(e.code ?? '');
};

const translated = (error: unknown) =>
  isUnreachable(error) ? new ObjectStoreUnavailable(error) : error;

/**
 * A body whose connection breaks mid-stream errors with `ObjectStoreUnavailable`: a body's error is
 * always its transport's, and its readers (hashing, tarball checks) must not answer 500 for it.
 */
function guardedBody(body: Readable): Readable {
  const out = new PassThrough();
  body.once('error', (error) => out.destroy(new ObjectStoreUnavailable(error)));
  out.once('close', () => body.destroy());
  return body.pipe(out);
}

/**
 * S3 or any S3-compatible store. The Agent PUTs to a presigned URL under `uploads/<id>`, never to
 * an object's own name: a presigned PUT cannot refuse to overwrite, so bytes reach their hash's
 * name only by a copy after `commitUpload` has hashed them.
 */
export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3';
  readonly #client: S3Client;

  constructor(
    readonly options: S3StoreOptions,
    readonly clock: Clock,
  ) {
    this.#client = new S3Client({
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      ...(options.endpoint && { endpoint: options.endpoint }),
      ...(options.credentials && { credentials: options.credentials }),
      // The default bakes a checksum of the empty body into presigned URLs (aws-sdk-js-v3#6994).
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  /** One request to the store, its unreachability said as `ObjectStoreUnavailable`. */
  #send: S3Client['send'] = ((command: Parameters<S3Client['send']>[0]) =>
    this.#client.send(command).catch((error: unknown) => {
      throw translated(error);
    })) as S3Client['send'];

  async uploadUrl(ticket: UploadTicket): Promise<UploadTarget> {
    const now = this.clock.now().getTime();
    const expiresMs = ticket.expiresAt.getTime();
    // Sign so the URL dies at `expiresAt`, even one already in the past (S3 wants ≥ 1 s).
    const expiresIn = Math.max(1, Math.ceil((expiresMs - now) / 1000));
    const signingDate = new Date(Math.min(now, expiresMs - 1000));
    const command = new PutObjectCommand({
      Bucket: this.options.bucket,
      Key: uploadKey(ticket.uploadId),
      ContentLength: ticket.size,
      ContentType: 'application/octet-stream',
    });
    const url = await getSignedUrl(this.#client, command, { expiresIn, signingDate });
    return { url, headers: { 'content-type': 'application/octet-stream' } };
  }

  async commitUpload(ticket: {
    uploadId: string;
    sha256: string;
    size: number;
  }): Promise<CommitResult> {
    const Bucket = this.options.bucket;
    const Key = uploadKey(ticket.uploadId);
    let body: Readable;
    try {
      body = guardedBody(
        (await this.#send(new GetObjectCommand({ Bucket, Key }))).Body as Readable,
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
      // Committed before (a retried complete) or never uploaded.
      const existing = await this.stat(ticket.sha256);
      return existing?.size === ticket.size ? 'stored' : 'missing';
    }
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      hash.update(chunk as Buffer);
    }
    if (size !== ticket.size || hash.digest('hex') !== ticket.sha256) {
      await this.#send(new DeleteObjectCommand({ Bucket, Key }));
      return 'mismatch';
    }
    if (!(await this.stat(ticket.sha256))) {
      await this.#send(
        new CopyObjectCommand({
          Bucket,
          Key: objectKey(ticket.sha256),
          CopySource: `${Bucket}/${Key}`,
        }),
      );
    }
    await this.#send(new DeleteObjectCommand({ Bucket, Key }));
    return 'stored';
  }

  async discardUpload(uploadId: string): Promise<void> {
    await this.#send(
      new DeleteObjectCommand({ Bucket: this.options.bucket, Key: uploadKey(uploadId) }),
    );
  }

  async stat(sha256: string): Promise<{ size: number } | undefined> {
    if (!SHA256_HEX.test(sha256)) return undefined;
    try {
      const head = await this.#send(
        new HeadObjectCommand({ Bucket: this.options.bucket, Key: objectKey(sha256) }),
      );
      return { size: head.ContentLength ?? 0 };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async read(sha256: string): Promise<Readable | undefined> {
    if (!SHA256_HEX.test(sha256)) return undefined;
    try {
      const object = await this.#send(
        new GetObjectCommand({ Bucket: this.options.bucket, Key: objectKey(sha256) }),
      );
      return guardedBody(object.Body as Readable);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async delete(sha256: string): Promise<void> {
    if (!SHA256_HEX.test(sha256)) return;
    await this.#send(
      new DeleteObjectCommand({ Bucket: this.options.bucket, Key: objectKey(sha256) }),
    );
  }

  async close(): Promise<void> {
    this.#client.destroy();
  }
}
