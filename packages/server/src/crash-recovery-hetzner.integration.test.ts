import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createAgent, listAgents } from '@svc/contract';
import { afterAll, describe, expect, it } from 'vitest';
import { crashScenario } from '../test/crash-scenario.js';
import { hetznerEnv } from '../test/hetzner/driver.js';
import { ENROLLING_GATEWAYS_HOST, enrollingGateways } from '../test/hetzner/enrolling-gateways.js';
import { type HetznerStandIn, startHetznerStandIn } from '../test/hetzner/stand-in.js';
import { conformanceOrWarn, expectConformant } from '../test/hetzner/test-helpers.js';
import { freePort, startService, stopService } from '../test/service-process.js';
import { TEST_ENV } from '../test/test-context.js';
import { waitFor } from '../test/wait.js';

// The crash-recovery scenario on the hetzner driver, against the stand-in of Hetzner Cloud: moves
// left in flight by a killed process, then a worker killed in the middle of Hetzner's calls (a
// server being made, a server being deleted). After the next start nothing is left at "Hetzner"
// that no Agent owns.

describe('a service on Hetzner Cloud killed mid-operation recovers', () => {
  let dataDir = '';
  let standIn: HetznerStandIn | undefined;
  let gateways: Server | undefined;
  const processes: ChildProcess[] = [];
  afterAll(async () => {
    for (const child of processes) child.kill('SIGKILL');
    gateways?.close();
    await standIn?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('resumes, times provisioning out, and leaves no server or firewall without an Agent', async () => {
    const conformance = await conformanceOrWarn();
    standIn = await startHetznerStandIn({ ...(conformance && { conformance }) });
    const stand = standIn;
    // An Agent runs once its gateway answers (port 8443 of its address, over TLS): every server
    // gets a loopback address of its own, where one listener enrolls and answers as each gateway.
    gateways = await enrollingGateways(Buffer.from(TEST_ENV.HMAC_KEY, 'base64'));
    for (let i = 0; i < 100; i += 1) stand.pinNextIpv4(ENROLLING_GATEWAYS_HOST);
    dataDir = await mkdtemp(path.join(tmpdir(), 'svc-crash-hetzner-'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = {
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: base,
      PROVISION_TIMEOUT_MS: '4000',
      // The killed worker's destroy is retried once its heartbeat is missed, not 10 minutes on.
      JOB_HEARTBEAT_SECONDS: '10',
      ...hetznerEnv(stand),
    };
    const scenario = crashScenario(base, 60_000);
    const { client, stateOf } = scenario;
    const calls = (operation: string) => stand.stats.byOperation.get(operation) ?? 0;
    const labelled = (id: string) => (resource: { labels: Record<string, string> }) =>
      resource.labels['svc/machine'] === id;

    const first = startService({ ...env, PROVISION_TIMEOUT_MS: '120000' });
    processes.push(first);
    await scenario.ready();
    const agents = await scenario.prepare();
    await stopService(first, 'SIGTERM');
    const apiOnly = startService(env, ['--role=api']);
    processes.push(apiOnly);
    const inFlight = await scenario.leaveInFlight(apiOnly, agents);

    // A worker killed inside Hetzner's calls: its destroy's DELETE and a new Agent's create
    // reach the stand-in, which does them after the worker is gone.
    stand.faults.delay(2_000, { method: 'DELETE', path: /^\/servers\/\d+$/ });
    stand.faults.delay(2_000, { method: 'POST', path: /^\/servers$/ });
    const deletes = calls('DELETE /servers/{id}');
    const worker = startService(env);
    processes.push(worker);
    await scenario.ready();
    const midCreate = (
      await client.call(createAgent, {
        body: { name: 'mid', size: 'small', region: 'eu', billingType: 'metered' },
      })
    ).body;
    // The create must be `midCreate`'s own: the resumed provisioning makes a server too.
    const createFor = (id: string) =>
      stand.stats.received.some(
        ({ method, path, body }) =>
          method === 'POST' &&
          path === '/servers' &&
          (body as { labels?: Record<string, string> }).labels?.['svc/machine'] === id,
      );
    await waitFor(
      () => calls('DELETE /servers/{id}') > deletes && createFor(midCreate.id),
      30_000,
      'the worker inside a delete and the create of a new Agent',
    );
    await stopService(worker, 'SIGKILL');
    // What the killed worker asked for is done now: a server of `midCreate`'s, a server deleted.
    await waitFor(
      () => [...stand.state.servers.values()].some(labelled(midCreate.id)),
      10_000,
      "the killed worker's server made",
    );
    stand.faults.clear();
    await new Promise((resolve) => setTimeout(resolve, 4_500));

    const second = startService(env);
    processes.push(second);
    await scenario.expectRecovered(inFlight, 90_000);
    await waitFor(async () => (await stateOf(midCreate.id)) === 'error', 60_000, 'mid timed out');

    const owners = (await client.call(listAgents)).body
      .filter((agent) => agent.status !== 'error')
      .map((agent) => agent.id);
    const idsOf = (resources: Iterable<{ labels: Record<string, string> }>) =>
      [...resources].map((r) => r.labels['svc/machine']).sort();
    await waitFor(
      () =>
        JSON.stringify(idsOf(stand.state.servers.values())) === JSON.stringify(owners) &&
        JSON.stringify(idsOf(stand.state.firewalls.values())) === JSON.stringify(owners),
      60_000,
      'only the stopped Agent has a server and a firewall',
    );
    expect(owners).toEqual([inFlight.toStop.id]);
    const [stopped] = [...stand.state.servers.values()];
    expect(stopped?.status).toBe('off');
    expect([...stand.state.images.values()].filter((i) => i.type === 'snapshot')).toEqual([]);
    await stopService(second, 'SIGTERM');
    expectConformant(conformance);
  }, 420_000);
});
