import type { Readable } from 'node:stream';
import type { Hono } from 'hono';
import type { AppEnv } from '../../http/app-env.js';

/** One expected upload: the bytes must have exactly this size and SHA-256, before `expiresAt`. */
export interface UploadTicket {
  /** Unique per ticket: where the bytes wait until `commitUpload` checks them. */
  readonly uploadId: string;
  readonly sha256: string;
  readonly size: number;
  readonly expiresAt: Date;
}

/** Where to send the bytes: a `PUT` with exactly these headers. */
export interface UploadTarget {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * The store could not be reached, or failed on its side: nothing about the request was wrong, and
 * the same request may succeed in a moment (`503 unavailable` with `Retry-After`). Nothing is
 * lost: an upload stays where it waits until a commit hashes it.
 */
export class ObjectStoreUnavailable extends Error {
  override name = 'ObjectStoreUnavailable';
  constructor(cause: unknown) {
    super(`the object store is unavailable: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
  }
}

/** What `commitUpload` found: the object is in place, or the upload never came, or it is wrong. */
export type CommitResult = 'stored' | 'missing' | 'mismatch';

/**
 * Content-addressed object storage: an object's name is the SHA-256 of its bytes, so stored bytes
 * can never change and identical files are kept once. Uploads go straight from the Agent to the
 * store through expiring URLs; nothing becomes an object before its size and hash are verified.
 */
export interface ObjectStore {
  readonly kind: 'fs' | 's3';
  /** A URL that accepts exactly the ticket's bytes until it expires. */
  uploadUrl(ticket: UploadTicket): Promise<UploadTarget>;
  /**
   * Checks the ticket's upload and moves it into place under its hash. An object that already
   * exists is never overwritten (its bytes are the same by construction).
   */
  commitUpload(ticket: Omit<UploadTicket, 'expiresAt'>): Promise<CommitResult>;
  /**
   * Forgets an upload that will never be committed (its ticket expired). Bytes that already
   * reached their hash's name stay: whether an object is still needed is the caller's call.
   */
  discardUpload(uploadId: string): Promise<void>;
  /** The stored object's size, or `undefined` when there is none. */
  stat(sha256: string): Promise<{ size: number } | undefined>;
  /** The object's bytes, or `undefined` when there is none. */
  read(sha256: string): Promise<Readable | undefined>;
  /** Removes an object; removing one that does not exist is not an error. */
  delete(sha256: string): Promise<void>;
  /** Adds the routes the store serves itself (the fs store's upload URLs), if any. */
  mount?(app: Hono<AppEnv>): void;
  close(): Promise<void>;
}

/** Where an object lives inside a store: fanned out by the hash's first two digits. */
export const objectKey = (sha256: string) => `sha256/${sha256.slice(0, 2)}/${sha256}`;

export const SHA256_HEX = /^[0-9a-f]{64}$/;
export const UPLOAD_ID = /^[0-9a-f-]{36}$/;
