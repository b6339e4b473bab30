import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTestContext, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { sweepAccounts } from '../accounts/accounts.jobs.js';
import { defineJob, handleJob } from './job.js';

const waitFor = async (check: () => boolean, timeoutMs = 15_000) => {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

const recordJob = defineJob({ name: 'test.record', payload: z.object({ marker: z.string() }) });
const slowJob = defineJob({ name: 'test.slow', payload: z.object({}) });
/** Declared, but no handler is registered for it. */
const unhandledJob = defineJob({ name: 'no.such-job', payload: z.object({}) });

describe.each(databaseKinds)('job queue on %s', (kind) => {
  const runs: string[] = [];
  let slowStarted = false;
  let slowFinished = false;
  let t: TestContext;

  beforeAll(async () => {
    t = await createTestContext(kind, {
      overrides: {
        extraJobs: [
          handleJob(recordJob, async ({ marker }) => {
            runs.push(marker);
          }),
          handleJob(slowJob, async () => {
            slowStarted = true;
            await new Promise((resolve) => setTimeout(resolve, 700));
            slowFinished = true;
          }),
        ],
      },
    });
  });
  afterAll(() => t?.close());

  it('runs a job enqueued in a committed transaction once, and never one whose transaction rolled back', async () => {
    let rolledBackId: string | null = null;
    await expect(
      t.ctx.database.transaction(async (tx) => {
        rolledBackId = await t.ctx.jobs.enqueue(tx, recordJob, { marker: 'rolled-back' });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await t.ctx.database.transaction((tx) =>
      t.ctx.jobs.enqueue(tx, recordJob, { marker: 'committed' }),
    );

    await waitFor(() => runs.includes('committed'));
    // Give a wrongly surviving job several polling rounds to show up.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(runs).toEqual(['committed']);
    expect(rolledBackId).toBeTruthy();
    const stored = await sql<{
      n: number;
    }>`select count(*)::int as n from pgboss.job where id = ${rolledBackId}`.execute(
      t.ctx.database.db,
    );
    expect(stored.rows[0]?.n).toBe(0);
  });

  it('refuses a wrong payload when type-checking and when enqueuing', async () => {
    // The declaration types the payload: this line only compiles with the directive (the
    // typecheck covers test files), and the schema refuses it at run time too.
    // @ts-expect-error marker is a string
    const invalid = t.ctx.jobs.enqueue(t.ctx.database.db, recordJob, { marker: 42 });
    await expect(invalid).rejects.toThrow(z.ZodError);
    await expect(invalid).rejects.toMatchObject({
      issues: [expect.objectContaining({ path: ['marker'], code: 'invalid_type' })],
    });
    await expect(t.ctx.jobs.enqueue(t.ctx.database.db, unhandledJob, {})).rejects.toThrow(
      'Unknown job',
    );
  });

  it('fails a run whose stored payload its schema refuses, naming the field, without calling the handler', async () => {
    // Stored by an older or a wrong producer: the same name, a payload the job's schema refuses.
    const stale = defineJob({ name: recordJob.name, payload: z.object({ marker: z.number() }) });
    const id = await t.ctx.jobs.enqueue(t.ctx.database.db, stale, { marker: 7 });
    const failure = () =>
      t.logs.entries().find((entry) => entry.msg === 'job failed' && entry.jobId === id);
    await waitFor(() => failure() !== undefined);
    const logged = JSON.stringify(failure());
    expect(logged).toContain('marker');
    expect(logged).toContain('expected string');
    expect(runs).not.toContain(7);
  });

  it('registers scheduled jobs', async () => {
    const schedules = await sql<{
      name: string;
      cron: string;
    }>`select name, cron from pgboss.schedule`.execute(t.ctx.database.db);
    expect(schedules.rows).toContainEqual({ name: sweepAccounts.name, cron: sweepAccounts.cron });
  });

  it('stops cleanly: a running job finishes before stop returns', async () => {
    await t.ctx.jobs.enqueue(t.ctx.database.db, slowJob, {});
    await waitFor(() => slowStarted);
    await t.ctx.jobs.stop();
    expect(slowFinished).toBe(true);
  });
});
