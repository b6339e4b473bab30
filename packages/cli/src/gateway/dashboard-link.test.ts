import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDashboardUrl } from './dashboard-link.js';

const agentId = '0b9e7c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5b';
const token = `svc1.${agentId}.3.${'Z'.repeat(43)}`;

describe("the dashboard link of the Agent's gateway", () => {
  let home: string;
  beforeAll(async () => {
    home = await mkdtemp(path.join(tmpdir(), 'svc-link-'));
    await mkdir(path.join(home, '.crabglamp'));
  });
  afterAll(() => rm(home, { recursive: true, force: true }));

  const withEnvFile = (lines: string) =>
    writeFile(path.join(home, '.crabglamp/agent.env'), `${lines}\n`);

  it("names the Agent's page under the service's URL, from the credentials file first", async () => {
    await withEnvFile(
      `SVC_API_URL=https://svc.example.com/\nSVC_AGENT_ID=${agentId}\nSVC_HMAC_TOKEN=${token}`,
    );
    expect(await agentDashboardUrl({ HOME: home, SVC_API_URL: 'http://stale.example' })).toBe(
      `https://svc.example.com/dashboard/agents/${agentId}?open=1`,
    );
  });

  it("uses the service's public URL, never the address the machine reaches the service at", async () => {
    await withEnvFile(
      `SVC_API_URL=http://10.77.0.1:8080\nSVC_PUBLIC_URL=http://localhost:8080/\nSVC_AGENT_ID=${agentId}\nSVC_HMAC_TOKEN=${token}`,
    );
    expect(await agentDashboardUrl({ HOME: home })).toBe(
      `http://localhost:8080/dashboard/agents/${agentId}?open=1`,
    );
    // Only in the environment (no file): the same.
    await rm(path.join(home, '.crabglamp/agent.env'));
    expect(
      await agentDashboardUrl({
        SVC_API_URL: 'http://10.77.0.1:8080',
        SVC_PUBLIC_URL: 'https://svc.example.com',
        SVC_HMAC_TOKEN: token,
      }),
    ).toBe(`https://svc.example.com/dashboard/agents/${agentId}?open=1`);
  });

  it('takes the id from the token when the file names none, and gives up without credentials', async () => {
    await withEnvFile(`SVC_API_URL=http://localhost:8080\nSVC_HMAC_TOKEN=${token}`);
    expect(await agentDashboardUrl({ HOME: home })).toBe(
      `http://localhost:8080/dashboard/agents/${agentId}?open=1`,
    );
    await withEnvFile(`SVC_API_URL=javascript:alert(1)\nSVC_HMAC_TOKEN=${token}`);
    expect(await agentDashboardUrl({ HOME: home })).toBeUndefined();
    await rm(path.join(home, '.crabglamp/agent.env'));
    expect(await agentDashboardUrl({ HOME: home })).toBeUndefined();
  });
});
