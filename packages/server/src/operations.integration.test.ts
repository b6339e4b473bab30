import { describe, expect, it } from 'vitest';
import { TestClient } from '../test/test-client.js';
import { createTestContext, TEST_ENV } from '../test/test-context.js';
import { createApp } from './app.js';
import { loadConfig } from './config/config.js';
import { resolveSecrets } from './config/dev-keys.js';
import { createContext } from './context.js';
import { openPglite } from './db/database.js';

describe('health and readiness', () => {
  it('answers /healthz and /readyz when migrated', async () => {
    const t = await createTestContext('pglite');
    try {
      expect(await t.client.get('/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
      expect(await t.client.get('/readyz')).toMatchObject({
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
    const ctx = await createContext(config, await resolveSecrets(config, secrets, () => {}), {
      database,
    });
    const client = new TestClient(createApp(ctx), config.http.publicUrl);
    expect(await client.get('/readyz')).toMatchObject({
      status: 503,
      body: { status: 'not_ready', checks: { database: true, migrations: false } },
    });
    expect((await client.get('/healthz')).status).toBe(200);
    await database.close();
    expect(await client.get('/readyz')).toMatchObject({
      status: 503,
      body: { checks: { database: false, migrations: false } },
    });
  });

  it('answers /healthz at once while start-up work is under way, and holds other requests until it is done', async () => {
    const t = await createTestContext('pglite');
    try {
      let finish = () => {};
      const starting = new Promise<void>((resolve) => {
        finish = resolve;
      });
      const client = new TestClient(createApp(t.ctx, { starting }), t.ctx.config.http.publicUrl);
      expect((await client.get('/healthz')).status).toBe(200);
      expect(await client.get('/readyz')).toMatchObject({
        status: 503,
        body: { status: 'not_ready', checks: { database: true, migrations: true, started: false } },
      });
      let answered = false;
      const me = client.get('/api/me').then((res) => {
        answered = true;
        return res;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(answered).toBe(false);
      finish();
      expect((await me).status).toBe(401);
      expect(await client.get('/readyz')).toMatchObject({
        status: 200,
        body: { status: 'ready', checks: { started: true } },
      });
    } finally {
      await t.close();
    }
  });
});
