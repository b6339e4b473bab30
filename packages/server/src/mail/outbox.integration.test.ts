import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import PostalMime from 'postal-mime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '../../test/admin-cli.js';
import { createTestContext, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import { systemClock } from '../adapters/clock.js';
import { createOutboxMailer } from './outbox.js';

/** Longer than a mail line may be: nodemailer wraps it (quoted-printable) in the file. */
const LONG_LINK = `https://svc.example/dashboard/reset?token=${'t0ken'.repeat(20)}`;

describe.each(databaseKinds)('mail into the outbox on %s', (kind) => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestContext(kind);
  });
  afterAll(() => t?.close());

  const written = () =>
    t.logs.entries().filter((entry) => entry.msg === 'mail written to the outbox');

  /** Enqueues a notice as a feature does; answers the outbox file the job wrote. */
  async function send(to: string, subject: string): Promise<string> {
    const before = written().length;
    await t.ctx.database.transaction((tx) =>
      t.ctx.mail.enqueue(tx, {
        template: 'notice',
        to,
        data: { subject, paragraphs: ['Hello <Ada>.'], action: { label: 'Go', url: LONG_LINK } },
      }),
    );
    const entry = await waitFor(() => written()[before], 15_000, `the outbox file to ${to}`);
    expect(entry).toMatchObject({ template: 'notice', to });
    return entry.file as string;
  }

  it('writes each message as an .eml file under DATA_DIR/outbox, named once in the log', async () => {
    const file = await send('ada@example.com', 'Welcome');
    expect(path.dirname(file)).toBe(path.join(t.ctx.config.dataDir, 'outbox'));
    expect(file).toMatch(/\.eml$/);
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    const raw = await readFile(file);
    expect(raw.toString()).toContain('\r\n');
    const parsed = await PostalMime.parse(raw);
    expect(parsed.from).toMatchObject({ name: 'svc', address: 'noreply@localhost' });
    expect(parsed.to).toEqual([expect.objectContaining({ address: 'ada@example.com' })]);
    expect(parsed.subject).toBe('Welcome');
    expect(parsed.text).toContain(`Go: ${LONG_LINK}`);
    expect(parsed.html).toContain('<p>Hello &#60;Ada&#62;.</p>');

    const logged = t.logs.text();
    expect(logged.split(path.basename(file)).length - 1).toBe(1);
    expect(logged).not.toContain('t0ken');
  });

  it('finds the newest message to an address, and says when there is none', async () => {
    await send('bo@example.com', 'First');
    await send('cy@example.com', 'Other');
    const second = await send('bo@example.com', 'Second');
    const latest = await t.ctx.mail.latestInOutbox('Bo@Example.com');
    expect(latest).toContain(`File: ${second}`);
    expect(latest).toContain('Subject: Second');
    await expect(t.ctx.mail.latestInOutbox('nobody@example.com')).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});

describe('npm run admin -- mail last', () => {
  let dir = '';
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('prints the newest message to an address decoded, and says why when it cannot', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'svc-mail-admin-'));
    const outbox = createOutboxMailer(
      path.join(dir, 'outbox'),
      'svc <noreply@localhost>',
      systemClock,
    );
    const mail = { to: 'ada@example.com', subject: 'Reset', html: '<p>Reset</p>' };
    const { file } = await outbox.send(
      { ...mail, text: `Reset: ${LONG_LINK}` },
      new AbortController().signal,
    );
    // Wrapped in the file: only a decoded message gives the operator a link that works.
    expect(await readFile(file as string, 'utf8')).not.toContain(LONG_LINK);

    const { stdout } = await admin({ DATA_DIR: dir }, 'mail', 'last', 'Ada@example.com');
    expect(stdout).toContain(`File: ${file}`);
    expect(stdout).toContain('To: ada@example.com');
    expect(stdout).toContain('Subject: Reset');
    expect(stdout).toContain(`Reset: ${LONG_LINK}`);

    await expect(admin({ DATA_DIR: dir }, 'mail', 'last', 'bo@example.com')).rejects.toMatchObject({
      stderr: expect.stringContaining('not_found: no message to bo@example.com'),
    });
    await expect(
      admin(
        { DATA_DIR: dir, SMTP_URL: 'smtp://mail.example:587' },
        'mail',
        'last',
        'ada@example.com',
      ),
    ).rejects.toMatchObject({ stderr: expect.stringContaining('invalid_state: SMTP_URL is set') });
  }, 120_000);
});
