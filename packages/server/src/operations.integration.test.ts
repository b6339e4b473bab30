import { getMe, healthz, readyz } from '@svc/contract';
import { describe, expect, it } from 'vitest';
import { TestClient } from '../test/test-client.js';
import { createTestContext, TEST_ENV } from '../test/test-context.js';
import { createApp } from './app.js';
import { composeService } from './composition-root.js';
import { loadConfig } from './config/config.js';
import { resolveSecrets } from './config/dev-keys.js';
import { openPglite } from './db/database.js';
import { Readiness } from './http/readiness.js';

describe('health and readiness', () => {
  it('answers /healthz and /readyz when migrated', async () => {
    const t = await createTestContext('pglite');
    try {
      expect(await t.client.call(healthz)).toMatchObject({ status: 200, body: { status: 'ok' } });
      expect(await t.client.call(readyz)).toMatchObject({
        status: 200,
        body: { status: 'ready', checks: { database: true, migrations: true } },
      });
    } finally {
      await t.close();
    }
  });

  it('answers /readyz with 503 while migrations are missing, and when the database is gone', async () => {
    const { config, secrets } = loadConfig({ ...TEST_ENV, LOG_LEVEL: 'silent' });
    const database = await openPglite('memory://');
    // Composed but not started: nothing has migrated this database.
    const service = await composeService(config, await resolveSecrets(config, secrets, () => {}), {
      work: false,
      parts: { database },
    });
    const client = new TestClient(service.app, config.http.publicUrl);
    expect(await client.send(readyz)).toMatchObject({
      status: 503,
      body: { status: 'not_ready', checks: { database: true, migrations: false } },
    });
    await client.call(healthz);
    await database.close();
    expect(await client.send(readyz)).toMatchObject({
      status: 503,
      body: { checks: { database: false, migrations: false } },
    });
  });

  it('answers /healthz at once while start-up work is under way, and holds other requests until it is done', async () => {
    const t = await createTestContext('pglite');
    try {
      // The same services in a process whose start-up work is under way.
      const readiness = new Readiness();
      readiness.move('starting');
      const app = createApp({ ...t.ctx, readiness });
      const client = new TestClient(app, t.ctx.config.http.publicUrl);
      await client.call(healthz);
      expect(await client.send(readyz)).toMatchObject({
        status: 503,
        body: { status: 'not_ready', checks: { database: true, migrations: true, started: false } },
      });
      let answered = false;
      const me = client.callError(getMe).then((res) => {
        answered = true;
        return res;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(answered).toBe(false);
      readiness.move('ready');
      expect((await me).status).toBe(401);
      expect(await client.call(readyz)).toMatchObject({
        status: 200,
        body: { status: 'ready', checks: { started: true } },
      });
    } finally {
      await t.close();
    }
  });
});
