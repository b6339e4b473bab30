import { createPlainVm, getPlainVm, plainVmSnapshots, updatePlainVm } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSmtpServer, type TestSmtpServer } from '../../test/smtp-server.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import { BACKUP_TRIES_PER_DAY, backupName, backupsJob } from './backups.js';

// A day's backup that keeps failing: each run of the day tries once more under the same name,
// and after the day's tries the owners are mailed once, however often the job runs after that.

describe.each(databaseKinds)('failing daily backups on %s', (kind) => {
  let smtp: TestSmtpServer;
  let t: TestContext;
  let user: TestClient;
  beforeAll(async () => {
    smtp = await startTestSmtpServer();
    t = await createTestContext(kind, {
      env: { SMTP_URL: smtp.url, MAIL_FROM: 'Svc <mail@svc.example>' },
      overrides: { immediateJobRetries: true },
    });
    user = t.newClient();
    await signUpUser(user);
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  const failedTries = async (id: string, name: string) =>
    (
      await t.ctx.database.db
        .selectFrom('machineSnapshots')
        .select('id')
        .where('machineId', '=', id)
        .where('name', '=', name)
        .where('status', '=', 'failed')
        .execute()
    ).length;
  const run = () => t.ctx.jobs.enqueue(t.ctx.database.db, backupsJob, {});
  const mailed = () =>
    smtp.received.filter((mail) => mail.parsed.subject?.startsWith("Today's backup of Plain VM"));

  it('retries on the next runs of the day, then mails the owners once', async () => {
    const body = {
      name: 'db',
      tier: 'small',
      region: 'eu',
      osImageKey: 'fedora-43',
      billingType: 'metered',
      access: { passwordEnabled: true, vaultEntryIds: [] as string[] },
    } as const;
    const { id } = (await user.call(createPlainVm, { body })).body;
    await waitFor(
      async () => (await user.call(getPlainVm, { params: { id } })).body.status === 'running',
      15_000,
      'running',
    );
    const patched = await user.call(updatePlainVm, {
      params: { id },
      body: { backups: { enabled: true, keep: 2 } },
    });
    expect(patched.body.backups).toMatchObject({ enabled: true, keep: 2 });
    await t.ctx.database.db
      .updateTable('plainVms')
      .set({ backupsHour: 0 })
      .where('id', '=', id)
      .execute();
    t.clock.advance(24 * 3_600_000);
    const name = backupName(t.clock.now());
    t.compute.behave('snapshots', { failTimes: Number.POSITIVE_INFINITY });

    for (let tries = 1; tries <= BACKUP_TRIES_PER_DAY; tries += 1) {
      await run();
      await waitFor(
        async () => (await failedTries(id, name)) === tries || undefined,
        15_000,
        `try ${tries}`,
      );
      expect(mailed()).toEqual([]);
    }
    // One failed backup is shown at a time: each try replaced the one before.
    const listed = (await user.call(plainVmSnapshots.list, { params: { id } })).body.snapshots;
    expect(listed.map((s) => [s.name, s.status])).toEqual([[name, 'failed']]);

    await run();
    await waitFor(() => mailed().length >= 1 || undefined, 15_000, 'mailed');
    const [mail] = mailed();
    expect(mail?.parsed.subject).toContain('Plain VM db');
    expect(mail?.parsed.text).toContain(`/plain-vms/${id}`);
    // Later runs of the day neither try again nor mail again.
    await run();
    await run();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await failedTries(id, name)).toBe(BACKUP_TRIES_PER_DAY);
    expect(mailed()).toHaveLength(1);

    // The next day, with the provider well again, the backup is taken and yesterday's failure goes.
    t.compute.behave('snapshots', { failTimes: 0 });
    t.clock.advance(24 * 3_600_000);
    const next = backupName(t.clock.now());
    await run();
    await waitFor(
      async () => {
        const snapshots = (await user.call(plainVmSnapshots.list, { params: { id } })).body
          .snapshots;
        return (
          snapshots.length === 1 && snapshots[0]?.name === next && snapshots[0].status === 'ready'
        );
      },
      15_000,
      'next day ready',
    );
  }, 120_000);

  it('a Plain VM PATCH without a setting, or with an unknown one, is 400', async () => {
    const res = await user.send(updatePlainVm, {
      params: { id: '00000000-0000-4000-8000-000000000000' },
      body: {} as never,
    });
    expect(res.status).toBe(400);
  });
});
