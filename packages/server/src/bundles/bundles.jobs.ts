import { z } from 'zod';
import type { Clock } from '../adapters/clock.js';
import type { ObjectStore } from '../adapters/object-store/object-store.js';
import type { Database } from '../db/database.js';
import { defineJob, handleJob } from '../jobs/job.js';
import type { Loggers } from '../logger.js';
import * as repo from './bundles.repo.js';
import * as stagings from './stagings.repo.js';

/** Expired tickets are kept this long after expiry, so an upload in flight can still land. */
const GRACE_MS = 60 * 60 * 1000;

/**
 * Removes what abandoned publishes left behind: expired upload tickets, their pending uploads,
 * and the objects they brought that no version and no live ticket uses.
 */
export async function sweepUploads(deps: { database: Database; store: ObjectStore; now: Date }) {
  const { database, store } = deps;
  const cutoff = new Date(deps.now.getTime() - GRACE_MS);
  const expired = await stagings.listExpiredUploads(database.db, cutoff);
  if (expired.length === 0) return { tickets: 0, objects: 0 };
  for (const ticket of expired) await store.discardUpload(ticket.id);
  const shas = [...new Set(expired.map((t) => t.sha256))];
  await stagings.deleteUploads(
    database.db,
    expired.map((t) => t.id),
  );
  // Checked after the tickets are gone: a version or a live ticket keeps its object.
  const inUse = await repo.objectsInUse(database.db, shas);
  const live = await stagings.objectsOfLiveUploads(database.db, shas);
  let objects = 0;
  for (const sha256 of shas) {
    if (inUse.has(sha256) || live.has(sha256)) continue;
    await store.delete(sha256);
    objects += 1;
  }
  return { tickets: expired.length, objects };
}

/** Hourly: removes upload tickets and staged files nobody finished. */
export const sweepUploadsJob = defineJob({
  name: 'bundles.sweep-uploads',
  payload: z.object({}),
  cron: '23 * * * *',
  retryLimit: 0,
});

export function bundlesJobs(deps: {
  database: Database;
  store: ObjectStore;
  clock: Clock;
  log: Loggers['root'];
}) {
  return [
    handleJob(sweepUploadsJob, async () => {
      const swept = await sweepUploads({ ...deps, now: deps.clock.now() });
      if (swept.tickets > 0) deps.log.info(swept, 'swept abandoned uploads');
    }),
  ];
}
