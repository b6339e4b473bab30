import { readFile, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import path from 'node:path';
import { serve } from '@hono/node-server';
import {
  type Agent,
  type AgentSource,
  activateSubscription,
  cloneAgent,
  createAgent,
  createOrg,
  deleteAgent,
  getAgent,
  openAgentGateway,
  restartAgent,
  startAgent,
  stopAgent,
  transferAgent,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentClientOf,
  complete,
  manifestOf,
  stageAndPublish,
} from '../../test/bundle-test-helpers.js';
import { gatewayCookie, openTerminal, type Terminal } from '../../test/gateway-terminal.js';
import { createIncusProject, INCUS_SOCKET, nameOf } from '../../test/incus.js';
import { localRequest, useAgent } from '../../test/localhost-http.js';
import { freePort } from '../../test/service-process.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';
import { IncusClient } from '../adapters/compute/incus/incus-client.js';
import { gatewayTarget } from '../edge/edge-routes.js';

// Agents as real Incus containers of the Agent image (`npm run test:incus`), driven through the
// HTTP API; their terminals reached at the gateway on each machine's own address, from this host
// (the only place an Agent's firewall lets in). PGlite only: the database side of every move is
// covered by the default suite on both databases; here the machines are what is tested.

describe('Agents on Incus', { timeout: 240_000 }, () => {
  let project: Awaited<ReturnType<typeof createIncusProject>>;
  let t: TestContext;
  let owner: TestClient;
  let stranger: TestClient;
  let incus: IncusClient;
  let listener: Server | undefined;
  let strangerSlug = '';
  const terminals: Terminal[] = [];

  beforeAll(async () => {
    project = await createIncusProject();
    incus = new IncusClient({ socketPath: INCUS_SOCKET, project: project.name });
    // The service listens on every address, as `npm start` does, so the Agents' `svc` reaches it
    // at the host's bridge address (what a loopback PUBLIC_URL becomes in their agent.env).
    const port = await freePort();
    listener = serve({
      fetch: (request) => t.app.fetch(request),
      port,
      hostname: '0.0.0.0',
    }) as Server;
    t = await createTestContext('pglite', {
      env: {
        PUBLIC_URL: `http://localhost:${port}`,
        COMPUTE_DRIVER: 'incus',
        INCUS_SOCKET,
        INCUS_PROJECT: project.name,
        INCUS_SIZE_FACTOR: '0.25',
      },
      overrides: { compute: undefined },
    });
    owner = t.newClient();
    stranger = t.newClient();
    await signUpUser(owner);
    strangerSlug = (await signUpUser(stranger)).account.slug;
  }, 120_000);

  afterAll(async () => {
    for (const terminal of terminals) terminal.close();
    listener?.close();
    await t?.close();
    incus?.close();
    await project?.remove();
  });

  const detail = async (as: TestClient, id: string) =>
    (await as.call(getAgent, { params: { id } })).body;

  /** Waits for the Agent to run and its gateway to answer on the machine's address. */
  const whenRunning = async (as: TestClient, id: string) => {
    const agent = await waitFor(
      async () => {
        const current = await detail(as, id);
        return ['running', 'error'].includes(current.status) && current;
      },
      120_000,
      `Agent ${id} running`,
    );
    expect(agent.status, `status reason: ${agent.statusReason}`).toBe('running');
    const server = await t.ctx.compute.getServer(id);
    expect(server?.gateway).toMatchObject({ port: 8443, tls: true });
    // As the edge reaches it: TLS, the machine's name, the service's client certificate.
    const target = gatewayTarget(server);
    if (!target) throw new Error(`no gateway for ${id}`);
    const base = t.ctx.gateways.url(target);
    useAgent(base, t.ctx.gateways.agentFor(target));
    await waitFor(
      () =>
        localRequest(`${base}/_svc/health`).then(
          (res) => res.status === 200,
          () => false,
        ),
      60_000,
      `gateway of ${id}`,
    );
    return { agent, base };
  };

  const create = async (as: TestClient, name: string, extra: { source?: AgentSource } = {}) => {
    const res = await as.call(createAgent, {
      body: { name, size: 'small', region: 'eu', billingType: 'metered', ...extra },
    });
    return res.body.id;
  };
  const linkOf = async (as: TestClient, id: string) =>
    (await as.call(openAgentGateway, { params: { id } })).body.url;

  const terminalOf = async (as: TestClient, id: string, base: string) => {
    const link = await linkOf(as, id);
    const terminal = await openTerminal(base, await gatewayCookie(base, link));
    terminals.push(terminal);
    return terminal;
  };

  let mine: { agent: Agent; base: string };
  let theirs: { agent: Agent; base: string };
  let shell: Terminal;

  it("runs svc gateway as the user agent; its terminal sees neither the host nor another Agent's machine", async () => {
    const [mineId, theirsId] = await Promise.all([
      create(owner, 'isolated one'),
      create(stranger, 'isolated two'),
    ]);
    [mine, theirs] = await Promise.all([
      whenRunning(owner, mineId),
      whenRunning(stranger, theirsId),
    ]);
    shell = await terminalOf(owner, mineId, mine.base);
    // Plain HTTP on the gateway's port is refused: TLS only, for the service's certificate only.
    await expect(localRequest(`http://${new URL(mine.base).host}/_svc/health`)).rejects.toThrow();
    const run = async (command: string) => (await shell.run(command)).output.trim();

    expect(await run('whoami; echo "$HOME"; hostname')).toBe(`agent\n/home/agent\nsvc-${mineId}`);
    // `svc` by its bare name, on the PATH of the Agent's terminal.
    expect(await run('command -v svc')).toBe('/usr/local/bin/svc');
    expect((await shell.run('svc --version')).code).toBe(0);
    // ... and it reaches the service with the Agent's own token.
    expect(await run('sed -n "s/^SVC_API_URL=//p" ~/.crabglamp/agent.env')).toMatch(
      /^http:\/\/10\.77\.0\.1:\d+$/,
    );
    const apps = await shell.run('svc apps list');
    expect(apps.code, apps.output).toBe(0);

    // The service's data directory, with a secret in it, is not there.
    const secret = path.join(t.ctx.config.dataDir, 'host-secret.txt');
    await writeFile(secret, 'host only\n');
    expect(await shell.run(`cat ${secret}`)).toMatchObject({ code: 1 });
    expect((await shell.run('test -e /var/lib/incus/unix.socket')).code).toBe(1);

    // Only its own processes: its init is the container's systemd, and no process of the host
    // (incusd, this test's Node) is listed.
    expect(await run('cat /proc/1/comm')).toBe('systemd');
    const processes = (await run('ps -e -o comm=')).split('\n');
    expect(processes).not.toContain('incusd');
    expect(processes.length).toBeLessThan(40);
    // Its root is not the host's: root inside is an unprivileged uid outside.
    expect(await run('sudo -n id -u')).toBe('0');
    const { pid } = await incus.call<{ pid: number }>('GET', `/1.0/instances/svc-${mineId}/state`);
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const hostUid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
    expect(hostUid).toBeGreaterThanOrEqual(100_000);

    // The other Agent: its gateway is unreachable from here, its files are nowhere here, and
    // this machine holds only its own token.
    const theirShell = await terminalOf(stranger, theirsId, theirs.base);
    expect((await theirShell.run('echo theirs > ~/their-file.txt')).code).toBe(0);
    const theirHost = new URL(theirs.base).hostname;
    expect(
      (await shell.run(`curl -s -m 3 http://${theirHost}:8443/_svc/health`, 30_000)).code,
    ).not.toBe(0);
    expect(await run('find / -xdev -name their-file.txt 2>/dev/null | wc -l')).toBe('0');
    expect(await run('ls --color=never /home')).toBe('agent');
    expect(await run('grep -c "^SVC_AGENT_ID=" ~/.crabglamp/agent.env')).toBe('1');
    expect(await run('sed -n "s/^SVC_AGENT_ID=//p" ~/.crabglamp/agent.env')).toBe(mineId);
    expect(await run('stat -c "%U %a" ~/.crabglamp/agent.env')).toBe('agent 600');
  });

  it("sends a browser without the cookie to PUBLIC_URL's dashboard, not to the service's address on the bridge", async () => {
    const publicUrl = t.ctx.config.http.publicUrl;
    const run = async (command: string) => (await shell.run(command)).output.trim();
    expect(await run('sed -n "s/^SVC_PUBLIC_URL=//p" ~/.crabglamp/agent.env')).toBe(publicUrl);
    // As the edge forwards it: the Agent's own Host, a page asked for, no cookie.
    const host = new URL(mine.agent.url).host;
    const visit = await localRequest(`${mine.base}/`, { headers: { host, accept: 'text/html' } });
    expect(visit.status).toBe(302);
    expect(visit.headers.location).toBe(`${publicUrl}/dashboard/agents/${mine.agent.id}?open=1`);
    // The "Dashboard" link of the gateway's pages too.
    const link = await linkOf(owner, mine.agent.id);
    const cookie = await gatewayCookie(mine.base, link);
    const home = await localRequest(`${mine.base}/_svc/`, { headers: { host, cookie } });
    expect(home.body).toContain(`href="${publicUrl}/dashboard/agents/${mine.agent.id}"`);
  });

  it("clones the home into a machine of its own, and a transfer's new token reaches the gateway", async () => {
    expect((await shell.run('echo "kept across the clone" > ~/note.txt')).code).toBe(0);
    const cloned = await owner.call(cloneAgent, {
      params: { id: mine.agent.id },
      body: { name: 'the clone', size: 'small', billingType: 'metered' },
    });
    const clone = await whenRunning(owner, cloned.body.id);
    expect(clone.base).not.toBe(mine.base);
    const cloneShell = await terminalOf(owner, clone.agent.id, clone.base);
    expect((await cloneShell.run('cat ~/note.txt')).output.trim()).toBe('kept across the clone');
    expect(
      (await cloneShell.run('sed -n "s/^SVC_AGENT_ID=//p" ~/.crabglamp/agent.env')).output.trim(),
    ).toBe(clone.agent.id);
    expect((await cloneShell.run('cat /etc/machine-id')).output).not.toBe(
      (await shell.run('cat /etc/machine-id')).output,
    );

    // Transfer: the machine gets the new token through the Incus API; the old cookie stops
    // working and a link from the new account's side works.
    const link = await linkOf(owner, mine.agent.id);
    const before = await gatewayCookie(mine.base, link);
    const page = (cookie: string) =>
      localRequest(`${mine.base}/_svc/`, { headers: { cookie } }).then((res) => res.status);
    expect(await page(before)).toBe(200);
    const org = (await owner.call(createOrg, { body: { name: 'Incus Org', slug: 'incus-org' } }))
      .body;
    // A metered Agent moves only into an organization whose billing is active.
    await owner.call(activateSubscription, { params: { id: org.id } });
    const moved = await owner.call(transferAgent, {
      params: { id: mine.agent.id },
      body: { targetAccountId: org.id },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    await waitFor(async () => (await page(before)) === 401, 30_000, 'old cookie refused');
    const after = await gatewayCookie(mine.base, await linkOf(owner, mine.agent.id));
    expect(await page(after)).toBe(200);
  });

  it('stops, starts, restarts and destroys the machine, leaving no instance or ACL', async () => {
    const id = mine.agent.id;
    const state = async () => (await t.ctx.compute.getServer(id))?.status;
    const settle = (status: string) =>
      waitFor(async () => (await detail(owner, id)).status === status, 60_000, status);

    expect((await owner.call(stopAgent, { params: { id } })).status).toBe(200);
    await settle('stopped');
    expect(await state()).toBe('off');
    expect((await owner.callError(stopAgent, { params: { id } })).status).toBe(409);

    expect((await owner.call(startAgent, { params: { id } })).status).toBe(200);
    await whenRunning(owner, id);
    expect(await state()).toBe('running');

    shell = await terminalOf(owner, id, mine.base);
    expect((await shell.run('touch /dev/shm/restart-marker')).code).toBe(0);
    expect((await owner.call(restartAgent, { params: { id } })).status).toBe(200);
    await settle('running');
    await whenRunning(owner, id);
    shell = await terminalOf(owner, id, mine.base);
    // A restart is a reboot: what lived in memory (/dev/shm) is gone.
    expect((await shell.run('test -e /dev/shm/restart-marker')).code).toBe(1);

    expect((await owner.call(deleteAgent, { params: { id } })).status).toBe(200);
    await waitFor(
      async () => (await owner.send(getAgent, { params: { id } })).status === 404,
      60_000,
    );
    expect(await t.ctx.compute.getServer(id)).toBeUndefined();
    const acls = (await incus.call<string[]>('GET', '/1.0/network-acls')).map(nameOf);
    expect(acls).not.toContain(`svc-${id}`);
  });

  it("adopts a bundle: the home holds its files and credential, the agent's own", async () => {
    // Published from the other Agent (it still runs); adopted into a new machine of the owner's.
    const publisher = agentClientOf(t, theirs.agent.id);
    const files = {
      'README.md': Buffer.from('# Adopted on Incus\n'),
      'tools/notes.txt': Buffer.from('from the bundle\n'),
      '.openclaw/.env': Buffer.from(`API_KEY=${'$'}{API_KEY}\n`),
    };
    const manifest = manifestOf('incus-adoptable', {
      credentials: [{ key: 'API_KEY', description: 'the key', locations: ['.openclaw/.env:1'] }],
    });
    const staged = await stageAndPublish(t, publisher, { manifest, files });
    expect((await complete(publisher, staged.bundleId, staged.stagingId)).status).toBe(201);

    const id = await create(owner, 'adopted', {
      source: { bundle: `${strangerSlug}/incus-adoptable`, credentials: { API_KEY: 'k-123' } },
    });
    const adopted = await whenRunning(owner, id);
    const adoptedShell = await terminalOf(owner, id, adopted.base);
    const run = async (command: string) => (await adoptedShell.run(command)).output.trim();
    expect(await run('cat ~/tools/notes.txt')).toBe('from the bundle');
    expect(await run('stat -c "%U %a" ~/.openclaw/.env ~/tools ~/README.md')).toBe(
      'agent 600\nagent 755\nagent 644',
    );
    expect(await run('cat ~/.openclaw/.env')).toBe("API_KEY='k-123'");
    expect(JSON.parse(await run('cat ~/bundle.json')).adoptedFrom).toEqual({
      bundle: `${strangerSlug}/incus-adoptable`,
      version: 1,
    });
    expect((await owner.call(deleteAgent, { params: { id } })).status).toBe(200);
  });
});
