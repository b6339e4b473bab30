import type { Executor } from '../db/database.js';
import * as repo from './bundles.repo.js';
import * as stagings from './stagings.repo.js';

/**
 * Of a deleted version's objects, the ones that must stay in the store: another version uses it,
 * an upload ticket in force expects it, or a publish under way declared it (its `complete` may
 * already have found it stored and is about to make a version of it). Asked after the deleted
 * rows are gone. The price: an object kept for a publish that is then abandoned stays in the
 * store, in no version, so nothing serves it (a small leak, rather than a version with a hole).
 */
export async function objectsStillNeeded(
  db: Executor,
  shas: readonly string[],
): Promise<Set<string>> {
  const [versions, uploads, publishing] = await Promise.all([
    repo.objectsInUse(db, shas),
    stagings.objectsOfLiveUploads(db, shas),
    stagings.objectsOfPublishing(db, shas),
  ]);
  return new Set([...versions, ...uploads, ...publishing]);
}
