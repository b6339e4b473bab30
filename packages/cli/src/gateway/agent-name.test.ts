import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentNameSource } from './agent-name.js';

const agentId = '0b9e7c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5b';
const at = '2026-01-01T00:00:00.000Z';
const self = {
  id: agentId,
  name: 'crab one',
  size: 'small',
  region: 'eu',
  billingType: 'metered',
  status: 'running',
  provider: 'local',
  accountId: agentId,
  cohort: 'current',
  subdomain: 'crab-one-abc123',
  url: 'http://crab-one-abc123.localhost/',
  specs: { vcpu: 1, ramGb: 1, diskGb: 10 },
  statusReason: null,
  adoptedFrom: null,
  credentialsToSet: [],
  idleStopMinutes: 60,
  stoppedReason: null,
  diskOperation: null,
  backups: { enabled: false, keep: 7, hourUtc: 3 },
  createdAt: at,
  updatedAt: at,
};

describe('agentNameSource', () => {
  let home: string;
  beforeAll(async () => {
    home = await mkdtemp(path.join(tmpdir(), 'svc-name-'));
    await mkdir(path.join(home, '.crabglamp'));
    await writeFile(
      path.join(home, '.crabglamp/agent.env'),
      `SVC_API_URL=http://svc.test\nSVC_HMAC_TOKEN=svc1.${agentId}.1.${'Z'.repeat(43)}\n`,
    );
  });
  afterAll(() => rm(home, { recursive: true, force: true }));

  it('asks the service once for the name with the Agent token, and keeps it', async () => {
    const asked: string[] = [];
    const name = agentNameSource({ HOME: home }, async (url, init) => {
      asked.push(
        `${String(url)} ${new Headers(init?.headers).get('authorization')?.split(' ')[0]}`,
      );
      return Response.json(self);
    });
    expect(await name()).toBe('crab one');
    expect(await name()).toBe('crab one');
    expect(asked).toEqual(['http://svc.test/api/agent/self Bearer']);
  });

  it('says nothing when the service does not answer, and asks again next time', async () => {
    let calls = 0;
    const name = agentNameSource({ HOME: home }, async () => {
      calls += 1;
      if (calls === 1) throw new TypeError('fetch failed');
      return Response.json(self);
    });
    expect(await name()).toBeUndefined();
    expect(await name()).toBe('crab one');
  });

  it('says nothing without credentials', async () => {
    expect(await agentNameSource({ HOME: path.join(home, 'none') }, fetch)()).toBeUndefined();
  });
});
