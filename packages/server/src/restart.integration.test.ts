import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { signIn, signUp } from '@svc/contract';
import { afterAll, describe, expect, it } from 'vitest';
import { TestClient } from '../test/test-client.js';
import { FAST_PASSWORDS, TEST_ENV } from '../test/test-context.js';
import { createTestDatabase, databaseKinds, testDatabaseUrl } from '../test/test-db.js';
import { composeService } from './composition-root.js';
import { loadConfig } from './config/config.js';
import { resolveSecrets } from './config/dev-keys.js';

/** Starts the service the way `main` does, on the configuration's own database. */
async function boot(env: Record<string, string>) {
  const { config, secrets: raw } = loadConfig({ ...TEST_ENV, LOG_LEVEL: 'silent', ...env });
  const secrets = await resolveSecrets(config, raw, () => {});
  const service = await composeService(config, secrets, {
    work: true,
    parts: { passwordCost: FAST_PASSWORDS },
  });
  await service.start();
  return { service, client: new TestClient(service.app, config.http.publicUrl) };
}

describe('a restart keeps what was stored', () => {
  const dirs: string[] = [];
  const drops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    await Promise.all(drops.map((drop) => drop()));
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  const backends: [string, () => Promise<Record<string, string>>][] = [
    [
      'PGlite in DATA_DIR',
      async () => {
        const dir = await mkdtemp(path.join(tmpdir(), 'svc-restart-'));
        dirs.push(dir);
        return { DATA_DIR: dir };
      },
    ],
  ];
  if (databaseKinds.includes('postgres')) {
    backends.push([
      'PostgreSQL at DATABASE_URL',
      async () => {
        const dir = await mkdtemp(path.join(tmpdir(), 'svc-restart-'));
        dirs.push(dir);
        const { database, drop } = await createTestDatabase('postgres');
        drops.push(drop);
        const name = (
          await database.db
            .selectNoFrom((eb) => eb.fn<string>('current_database').as('d'))
            .executeTakeFirstOrThrow()
        ).d;
        await database.close();
        return { DATA_DIR: dir, DATABASE_URL: testDatabaseUrl(name) };
      },
    ]);
  }

  it.each(backends)(
    'a user created before a restart signs in after it (%s)',
    async (_, makeEnv) => {
      const env = await makeEnv();
      const first = await boot(env);
      const signedUp = await first.client.call(signUp, {
        body: { email: 'persist@example.com', password: 'survives restarts', name: 'Persist' },
      });
      await first.service.stop();

      const second = await boot(env);
      const signedIn = await second.client.call(signIn, {
        body: { email: 'persist@example.com', password: 'survives restarts' },
      });
      expect(signedIn.body.user.id).toBe(signedUp.body.user.id);
      await second.service.stop();
    },
    // Two boots of a whole service (PGlite, migrations, pg-boss): slow on a loaded machine.
    90_000,
  );

  it('refuses to open a PGlite directory another live process holds', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'svc-lock-'));
    dirs.push(dir);
    const first = await boot({ DATA_DIR: dir });
    await expect(boot({ DATA_DIR: dir })).rejects.toThrow(/in use by process/);
    await first.service.stop();
  }, 90_000);
});
