import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../../test/test-db.js';
import { createLogger } from '../logger.js';
import { defineJob, handleJob } from './job.js';
import { createJobQueue, type JobQueue } from './queue.js';

const pingJob = defineJob({ name: 'test.ping', payload: z.object({ at: z.number() }) });
/** Far longer than the test waits: a job that runs did so because its insert woke the worker. */
const POLLING_INTERVAL_SECONDS = 120;

describe.each(databaseKinds)('job queue wake on %s', (kind) => {
  let db: TestDatabase;
  let jobs: JobQueue;
  const ran: number[] = [];

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    jobs = createJobQueue(db.database, createLogger({ logLevel: 'silent' }), {
      pollingIntervalSeconds: POLLING_INTERVAL_SECONDS,
    });
    await jobs.start([handleJob(pingJob, async ({ at }) => void ran.push(Date.now() - at))], {
      work: true,
    });
    // The worker's first fetch happens at start; past it, only a wake (or the next poll) runs a job.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  });
  afterAll(async () => {
    await jobs?.stop();
    await db?.database.close();
    await db?.drop();
  });

  it('runs a job enqueued in a committed transaction without waiting for the next poll', async () => {
    for (let i = 0; i < 3; i += 1) {
      await db.database.transaction((tx) => jobs.enqueue(tx, pingJob, { at: Date.now() }));
      const until = Date.now() + 20_000;
      while (ran.length <= i && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(ran.length, `job ${i + 1} ran before the ${POLLING_INTERVAL_SECONDS} s poll`).toBe(
        i + 1,
      );
    }
  });
});
