import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createAgent, getMe, signIn } from '@svc/contract';
import { afterAll, describe, expect, it } from 'vitest';
import { admin, adminIn } from '../../test/admin-cli.js';
import { TestClient } from '../../test/test-client.js';
import { FAST_PASSWORDS, TEST_ENV } from '../../test/test-context.js';
import { composeService } from '../composition-root.js';
import { loadConfig } from '../config/config.js';
import { resolveSecrets } from '../config/dev-keys.js';
import { adminSocketPath } from './socket-path.js';

describe('operator CLI', () => {
  let dir = '';
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('works on the database directly when the service is down, and through the socket while it runs', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'svc-admin-'));
    const env = { DATA_DIR: dir };

    // Service down: the CLI opens the database itself.
    const created = await admin(
      env,
      'create-user',
      '--email',
      'Op@Example.com',
      '--password',
      'operator pass',
      '--name',
      'Op',
    );
    expect(JSON.parse(created.stdout).user.email).toBe('op@example.com');
    const org = await admin(
      env,
      'create-org',
      '--name',
      'Acme',
      '--slug',
      'acme',
      '--owner',
      'op@example.com',
    );
    expect(JSON.parse(org.stdout)).toMatchObject({ slug: 'acme', kind: 'organization' });
    await expect(
      admin(env, 'create-org', '--name', 'Acme', '--slug', 'acme', '--owner', 'op@example.com'),
    ).rejects.toMatchObject({
      stderr: expect.stringContaining('slug_taken'),
    });
    // Lists, from the database itself: JSON when stdout is no terminal, and with --json.
    const users = JSON.parse((await admin(env, 'list', 'users')).stdout);
    expect(users).toEqual([expect.objectContaining({ email: 'op@example.com', name: 'Op' })]);
    expect(JSON.parse((await admin(env, 'list', 'orgs', '--json')).stdout)).toEqual([
      expect.objectContaining({ slug: 'acme', members: 1, subscriptionActive: false }),
    ]);
    expect(JSON.parse((await admin(env, 'list', 'plain-vms')).stdout)).toEqual([]);

    // Service up: it holds the PGlite database, so only the socket path can work.
    const { config, secrets: raw } = loadConfig({ ...TEST_ENV, LOG_LEVEL: 'silent', ...env });
    const service = await composeService(config, await resolveSecrets(config, raw, () => {}), {
      work: false,
      adminSocket: true,
      parts: { passwordCost: FAST_PASSWORDS },
    });
    await service.start();
    try {
      expect((await stat(adminSocketPath(dir))).mode & 0o777).toBe(0o600);
      await admin(
        env,
        'create-user',
        '--email',
        'member@example.com',
        '--password',
        'member pass',
        '--name',
        'M',
      );
      await admin(
        env,
        'add-member',
        '--org',
        'acme',
        '--email',
        'member@example.com',
        '--role',
        'admin',
      );
      const on = await admin(env, 'subscription', 'on', 'acme');
      expect(JSON.parse(on.stdout).subscriptionActive).toBe(true);
      await expect(admin(env, 'subscription', 'maybe', 'acme')).rejects.toMatchObject({
        stderr: expect.stringContaining('invalid_request'),
      });
      // The socket answers the service's envelope: the reason reaches the operator.
      const missing = '00000000-0000-4000-8000-000000000000';
      await expect(admin(env, 'agent', 'token', missing)).rejects.toMatchObject({
        stderr: expect.stringContaining(`not_found: no Agent ${missing}`),
      });

      const client = new TestClient(service.app, config.http.publicUrl);
      await client.call(signIn, {
        body: { email: 'member@example.com', password: 'member pass' },
      });
      const acme = (await client.call(getMe)).body.accounts.find((a) => a.slug === 'acme');
      expect(acme).toMatchObject({ role: 'admin', subscriptionActive: true });

      // Agent commands: nested names, positional id, a switch.
      const created = await client.call(createAgent, {
        body: {
          name: 'ops',
          size: 'small',
          region: 'eu',
          billingType: 'metered',
          accountId: acme?.id,
        },
      });
      const legacy = await admin(env, 'agent', 'legacy', created.body.id);
      expect(JSON.parse(legacy.stdout)).toMatchObject({
        id: created.body.id,
        cohort: 'legacy',
        provider: 'fly',
      });
      const token = JSON.parse((await admin(env, 'agent', 'token', created.body.id)).stdout).token;
      expect(token).toMatch(new RegExp(`^svc1\\.${created.body.id}\\.1\\.`));
      const renewed = JSON.parse(
        (await admin(env, 'agent', 'token', created.body.id, '--regenerate')).stdout,
      ).token;
      expect(renewed).toMatch(new RegExp(`^svc1\\.${created.body.id}\\.2\\.`));

      // Lists through the socket: the rows the service holds.
      const orgs = JSON.parse((await admin(env, 'list', 'orgs', '--json')).stdout);
      expect(orgs).toEqual([
        expect.objectContaining({ slug: 'acme', members: 2, subscriptionActive: true }),
      ]);
      const emails = JSON.parse((await admin(env, 'list', 'users')).stdout).map(
        (u: { email: string }) => u.email,
      );
      expect(emails.sort()).toEqual(['member@example.com', 'op@example.com']);
      const agents = JSON.parse((await admin(env, 'list', 'agents', '--json')).stdout);
      expect(agents).toEqual([
        expect.objectContaining({ id: created.body.id, account: 'acme', cohort: 'legacy' }),
      ]);
      expect(JSON.parse((await admin(env, 'list', 'plain-vms')).stdout)).toEqual([]);

      const migrate = await admin(env, 'migrate');
      expect(JSON.parse(migrate.stdout)).toEqual({ applied: [] });
    } finally {
      await service.stop();
    }
  }, 300_000);

  it('refuses to make a fresh ./data when DATA_DIR is unset: it says where it looked', async () => {
    const cwd = await mkdtemp(path.join(tmpdir(), 'svc-admin-cwd-'));
    try {
      const failed = await adminIn(cwd, { DATA_DIR: undefined }, 'list', 'users').then(
        () => undefined,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stderr).toContain(path.join(cwd, 'data'));
      expect(failed?.stderr).toContain('Set DATA_DIR');
      expect(await readdir(cwd)).toEqual([]);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  }, 120_000);
});
