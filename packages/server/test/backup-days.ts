import { agentSnapshots, plainVmSnapshots, type Snapshot } from '@svc/contract';
import { backupName, backupsJob } from '../src/lifecycle/backups.js';
import type { TestClient } from './test-client.js';
import type { TestContext } from './test-context.js';
import { waitFor } from './wait.js';

const DAY_MS = 24 * 3_600_000;

/**
 * Daily backups as the job takes them, with the test's clock moved a day at a time: the
 * machine's hour is set to 0 (due on every day the clock reaches), then for each of `days` the
 * clock moves a day on, the `machines.backups` job runs (twice: a repeated run takes nothing
 * more) and the day's backup becomes ready. A last run prunes what the last day put beyond
 * `keep`. Answers the names of the days' backups, oldest first, and the machine's snapshots.
 */
export async function runBackupDays(
  t: Pick<TestContext, 'ctx' | 'clock'>,
  client: TestClient,
  machine: { kind: 'agent' | 'plain_vm'; id: string },
  days: number,
  timeoutMs = 120_000,
) {
  const endpoints = machine.kind === 'agent' ? agentSnapshots : plainVmSnapshots;
  const table = machine.kind === 'agent' ? 'agents' : 'plainVms';
  await t.ctx.database.db
    .updateTable(table)
    .set({ backupsHour: 0 })
    .where('id', '=', machine.id)
    .execute();
  const list = async () =>
    (await client.call(endpoints.list, { params: { id: machine.id } })).body
      .snapshots as Snapshot[];
  const runJob = () => t.ctx.jobs.enqueue(t.ctx.database.db, backupsJob, {});
  const names: string[] = [];
  for (let day = 0; day < days; day += 1) {
    t.clock.advance(DAY_MS);
    const name = backupName(t.clock.now());
    names.push(name);
    await runJob();
    await runJob();
    await waitFor(
      async () => (await list()).some((s) => s.name === name && s.status === 'ready'),
      timeoutMs,
      `${name} ready`,
    );
  }
  const keep = (
    await t.ctx.database.db
      .selectFrom(table)
      .select('backupsKeep')
      .where('id', '=', machine.id)
      .executeTakeFirstOrThrow()
  ).backupsKeep;
  await runJob();
  const snapshots = await waitFor(
    async () => {
      const now = await list();
      return now.filter((s) => s.kind === 'backup').length <= keep ? now : undefined;
    },
    timeoutMs,
    'pruned to keep',
  );
  return { names, snapshots };
}
