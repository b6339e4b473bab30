import type { ValidationIssue } from '@svc/contract';
import type { ObjectStore } from '../adapters/object-store/object-store.js';
import type { PublishDeclaration } from '../db/schema.js';

/** At most this many objects are checked at once (S3 round trips, file hashing). */
const PARALLEL = 8;

/**
 * Checks that every object a publish declared is stored with its size and SHA-256: uploaded ones
 * are committed (hashed) now, the others must already exist. Returns one issue per bad object,
 * naming the first path that uses it.
 */
export async function verifyObjects(
  store: ObjectStore,
  declared: PublishDeclaration,
  uploads: readonly { id: string; sha256: string; size: string | number }[],
): Promise<ValidationIssue[]> {
  const ticketBySha = new Map(uploads.map((u) => [u.sha256, u]));
  const objects = new Map<string, { size: number; path: string }>();
  objects.set(declared.tarball.sha256, { size: declared.tarball.size, path: 'tarball' });
  for (const file of declared.files) {
    if (!objects.has(file.sha256)) objects.set(file.sha256, { size: file.size, path: file.path });
  }
  const issues: ValidationIssue[] = [];
  const queue = [...objects];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const [sha256, { size, path }] = next;
      const ticket = ticketBySha.get(sha256);
      let result: 'stored' | 'missing' | 'mismatch';
      if (ticket) {
        result = await store.commitUpload({ uploadId: ticket.id, sha256, size });
      } else {
        const found = await store.stat(sha256);
        result = !found ? 'missing' : found.size === size ? 'stored' : 'mismatch';
      }
      if (result === 'missing') {
        issues.push({
          path: [path],
          message: 'The object was not uploaded',
          code: 'missing_upload',
        });
      } else if (result === 'mismatch') {
        issues.push({
          path: [path],
          message: 'The uploaded bytes do not have the declared size and SHA-256',
          code: 'upload_mismatch',
        });
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return issues.sort((a, b) => String(a.path[0]).localeCompare(String(b.path[0])));
}
