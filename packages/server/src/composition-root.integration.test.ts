import * as api from '@svc/contract';
import { describe, expect, it } from 'vitest';
import { TestClient } from '../test/test-client.js';
import { STAND_IN_PROBES, TestComputeDriver } from '../test/test-compute-driver.js';
import { TEST_ENV } from '../test/test-context.js';
import { composeService } from './composition-root.js';
import { loadConfig } from './config/config.js';
import { resolveSecrets } from './config/dev-keys.js';
import { openPglite } from './db/database.js';
import { ReadinessMoveRefused } from './http/readiness.js';

async function compose() {
  const { config, secrets: raw } = loadConfig({ ...TEST_ENV, LOG_LEVEL: 'silent' });
  const database = await openPglite('memory://');
  const compute = new TestComputeDriver();
  const service = await composeService(config, await resolveSecrets(config, raw, () => {}), {
    work: false,
    parts: { database, compute, machineProbes: STAND_IN_PROBES },
  });
  return { service, database, compute, client: new TestClient(service.app, config.http.publicUrl) };
}

// A whole service each (PGlite, migrations): slow on a loaded machine.
describe('the composition root', () => {
  it('builds on the parts it is handed and moves the one readiness through the start and the stop', async () => {
    const { service, compute, client } = await compose();
    expect(service.ctx.compute).toBe(compute);
    expect(service.ctx.readiness.state).toBe('loading');
    const starting = service.start();
    expect(service.ctx.readiness.state).toBe('starting');
    await starting;
    expect(service.ctx.readiness.state).toBe('ready');
    expect(await client.send(api.readyz)).toMatchObject({
      status: 200,
      body: { status: 'ready', checks: { database: true, migrations: true, started: true } },
    });
    await service.stop();
    expect(service.ctx.readiness.state).toBe('stopping');
    // A second stop (a second signal) is refused: the process entry exits at once instead.
    await expect(service.stop()).rejects.toThrow(ReadinessMoveRefused);
  }, 90_000);

  it('answers the requests that waited for a start that failed with its error, and still stops', async () => {
    const { service, database, client } = await compose();
    // Migrations cannot run on a closed database: the start fails.
    await database.close();
    const starting = service.start();
    const waiting = client.send(api.getMe);
    await expect(starting).rejects.toThrow();
    expect(service.ctx.readiness.state).toBe('failed');
    expect(await waiting).toMatchObject({ status: 500, body: { error: 'internal_error' } });
    expect(await client.send(api.readyz)).toMatchObject({
      status: 503,
      body: { status: 'not_ready', checks: { started: false } },
    });
    await service.stop();
    expect(service.ctx.readiness.state).toBe('stopping');
  }, 90_000);
});
