import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_FIREWALL_RULES } from '@svc/contract';
import { pushPrivateKey, pushPublicKey } from '@svc/contract/agent-env-push';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAgentEnv } from '../../../../../cli/src/agent-env.js';
import { hetznerDriver, hetznerDriverOnStandIn } from '../../../../test/hetzner/driver.js';
import { expectConformant } from '../../../../test/hetzner/test-helpers.js';
import { TEST_ENV } from '../../../../test/test-context.js';
import { startTestGateway } from '../../../../test/test-gateway.js';
import { ComputeFailure, type CreateServerSpec } from '../compute-driver.js';

// The hetzner driver against the stand-in of Hetzner Cloud's API, every request and answer
// checked against Hetzner's published description (HCLOUD_OPENAPI).

const TEST_HMAC_KEY = Buffer.from(TEST_ENV.HMAC_KEY, 'base64');
let setup: Awaited<ReturnType<typeof hetznerDriverOnStandIn>>;
beforeAll(async () => {
  setup = await hetznerDriverOnStandIn();
});
afterAll(async () => {
  expectConformant(setup.conformance);
  await setup.standIn.close();
});

const plainVm = (id: string, extra: Partial<CreateServerSpec> = {}): CreateServerSpec => ({
  id,
  size: 'small',
  region: 'eu',
  image: 'debian-12',
  bootstrapEnv: {},
  labels: { managedBy: 'svc', kind: 'plain_vm', plainVmId: id },
  userData: '#cloud-config\nhostname: web\n',
  login: { user: 'debian', authorizedKeys: [] },
  firewall: DEFAULT_FIREWALL_RULES,
  ...extra,
});

const agent = (id: string): CreateServerSpec => ({
  id,
  size: 'medium',
  region: 'us',
  bootstrapEnv: { SVC_API_URL: 'https://svc.example', SVC_AGENT_ID: id, SVC_HMAC_TOKEN: 't0k' },
  labels: { managedBy: 'svc', kind: 'agent', agentId: id },
});

const serversOf = (id: string) =>
  [...setup.standIn.state.servers.values()].filter((s) => s.labels['svc/machine'] === id);
const firewallsOf = (id: string) =>
  [...setup.standIn.state.firewalls.values()].filter((f) => f.labels['svc/machine'] === id);
const imagesOf = (id: string) =>
  [...setup.standIn.state.images.values()].filter((i) => i.labels['svc/machine'] === id);

describe('hetzner driver', () => {
  it('maps every row of the size table to the smallest server type that meets it', () => {
    expect(setup.driver.sizes).toEqual({
      small: { us: 'cpx21', eu: 'cpx22' },
      medium: { us: 'cpx31', eu: 'cpx32' },
      large: { us: 'cpx41', eu: 'cpx42' },
    });
  });

  it('makes a Plain VM behind its own firewall, powers it off, on and reboots it, and removes everything', async () => {
    const id = randomUUID();
    const info = await setup.driver.createServer(plainVm(id));
    expect(info).toMatchObject({ id, status: 'running', labels: { kind: 'plain_vm' } });
    expect(info.ssh).toEqual({ host: info.ipv4, port: 22 });
    const [server] = serversOf(id);
    expect(server?.name).toBe(`svc-${id}`);
    expect([server?.serverType.name, server?.location.name]).toEqual(['cpx22', 'hel1']);
    expect(server?.userData).toContain('hostname: web');
    const [firewall] = firewallsOf(id);
    expect(firewall?.appliedTo).toEqual([{ type: 'server', server: { id: server?.id } }]);
    expect(await setup.driver.getFirewall(id)).toEqual(DEFAULT_FIREWALL_RULES);

    await setup.driver.powerOff(id);
    expect((await setup.driver.getServer(id))?.status).toBe('off');
    await setup.driver.powerOff(id);
    await setup.driver.powerOn(id);
    expect((await setup.driver.getServer(id))?.status).toBe('running');
    await setup.driver.reboot(id);
    expect((await setup.driver.getServer(id))?.status).toBe('running');

    await setup.driver.deleteServer(id);
    expect(serversOf(id)).toEqual([]);
    expect(firewallsOf(id)).toEqual([]);
    expect(await setup.driver.getServer(id)).toBeUndefined();
    await setup.driver.deleteServer(id);
  });

  it('replaces firewall rules with set_rules and answers with the rules as re-read (IPv6 canonical)', async () => {
    const id = randomUUID();
    await setup.driver.createServer(plainVm(id));
    const rules = await setup.driver.setFirewall(id, [
      {
        direction: 'in',
        protocol: 'udp',
        port: '60000-61000',
        sourceIps: ['203.0.113.0/24', '2001:0DB8:0000::/32'],
        description: 'mosh',
      },
    ]);
    expect(rules).toEqual([
      {
        direction: 'in',
        protocol: 'udp',
        port: '60000-61000',
        sourceIps: ['203.0.113.0/24', '2001:db8::/32'],
        description: 'mosh',
      },
    ]);
    expect(await setup.driver.getFirewall(id)).toEqual(rules);
    expect(await setup.driver.setFirewall(id, [])).toEqual([]);
    await setup.driver.deleteServer(id);
  });

  it('makes an Agent whose cloud-init installs svc with its credentials, its gateway open to the edge only', async () => {
    const id = randomUUID();
    const info = await setup.driver.createServer(agent(id));
    expect(info.gateway).toEqual({ host: info.ipv4, port: 8443 });
    const [server] = serversOf(id);
    expect([server?.serverType.name, server?.location.name]).toEqual(['cpx31', 'hil']);
    expect(setup.standIn.state.images.get(server?.imageId as number)?.name).toBe('debian-12');
    expect(server?.userData).toContain('SVC_HMAC_TOKEN=t0k');
    expect(server?.userData).toContain('https://svc.example/downloads/svc-linux-x64.tar.gz');
    expect(await setup.driver.getFirewall(id)).toEqual([
      expect.objectContaining({ port: '8443', sourceIps: ['198.51.100.7/32'] }),
    ]);
    await setup.driver.deleteServer(id);
  });

  it("pushes an Agent's new credentials to its gateway, signed with the service's key", async () => {
    const id = randomUUID();
    const env = { ...agent(id).bootstrapEnv, SVC_PUSH_KEY: pushPublicKey(TEST_HMAC_KEY) };
    const gateway = await startTestGateway(env);
    try {
      const driver = await hetznerDriver(setup.standIn, { gatewayPort: gateway.port });
      setup.standIn.pinNextIpv4('127.0.0.1');
      await driver.createServer(agent(id));
      await driver.setBootstrapEnv(id, { ...env, SVC_HMAC_TOKEN: 'renewed', SVC_PUSH_KEY: 'x' });
      expect(await readAgentEnv(gateway.home)).toMatchObject({
        SVC_HMAC_TOKEN: 'renewed',
        SVC_PUSH_KEY: env.SVC_PUSH_KEY,
      });
      // Signed with another key, the gateway refuses it and the driver says so.
      const impostor = await hetznerDriver(setup.standIn, {
        gatewayPort: gateway.port,
        pushKey: pushPrivateKey(Buffer.alloc(32, 9)),
      });
      await expect(impostor.setBootstrapEnv(id, { SVC_HMAC_TOKEN: 'evil' })).rejects.toThrow(/403/);
      expect((await readAgentEnv(gateway.home)).SVC_HMAC_TOKEN).toBe('renewed');
      // A stopped Agent cannot take it: the push job tries again later.
      await driver.powerOff(id);
      await expect(driver.setBootstrapEnv(id, env)).rejects.toThrow(/not running/);
      await driver.deleteServer(id);
    } finally {
      await gateway.close();
    }
  });

  it("brings an adopted home in through the Agent's gateway once its server runs", async () => {
    const id = randomUUID();
    const env = { ...agent(id).bootstrapEnv, SVC_PUSH_KEY: pushPublicKey(TEST_HMAC_KEY) };
    const gateway = await startTestGateway(env);
    const seed = await mkdtemp(path.join(tmpdir(), 'svc-seed-src-'));
    try {
      await mkdir(path.join(seed, 'notes/deep'), { recursive: true });
      await writeFile(path.join(seed, 'notes/deep/a.md'), 'adopted\n');
      await mkdir(path.join(seed, '.openclaw'));
      await writeFile(path.join(seed, '.openclaw/.env'), "KEY='v'\n", { mode: 0o600 });
      const driver = await hetznerDriver(setup.standIn, { gatewayPort: gateway.port });
      setup.standIn.pinNextIpv4('127.0.0.1');
      await driver.createServer({ ...agent(id), homeSeed: seed });
      expect(await readFile(path.join(gateway.home, 'notes/deep/a.md'), 'utf8')).toBe('adopted\n');
      const envFile = path.join(gateway.home, '.openclaw/.env');
      expect((await stat(envFile)).mode & 0o777).toBe(0o600);
      // A retry of the whole create (its answer lost) finds the home seeded with the same tree.
      await driver.createServer({ ...agent(id), homeSeed: seed });
      await driver.deleteServer(id);
    } finally {
      await gateway.close();
      await rm(seed, { recursive: true, force: true });
    }
  });

  it('clones from a snapshot of the source, deleted once the clone runs', async () => {
    const source = randomUUID();
    const clone = randomUUID();
    await setup.driver.createServer(agent(source));
    await setup.driver.createServer({ ...agent(clone), sourceServerId: source });
    const [server] = serversOf(clone);
    // Made from an image that was a snapshot of the source, and is gone now.
    expect(setup.standIn.state.images.has(server?.imageId as number)).toBe(false);
    expect(imagesOf(clone)).toEqual([]);
    await setup.driver.deleteServer(clone);
    await setup.driver.deleteServer(source);
  });

  it('finds the server an attempt made when its answer was lost, instead of making another', async () => {
    const id = randomUUID();
    setup.standIn.faults.failNext({ method: 'POST', path: /^\/servers$/ }, 'lose-answer');
    await setup.driver.createServer(plainVm(id));
    expect(serversOf(id)).toHaveLength(1);
    expect(firewallsOf(id)).toHaveLength(1);
    // A retried job after a crash: the same call again changes nothing.
    await setup.driver.createServer(plainVm(id));
    expect(serversOf(id)).toHaveLength(1);
    await setup.driver.deleteServer(id);
  });

  it('waits out a locked server and a dropped connection', async () => {
    const id = randomUUID();
    await setup.driver.createServer(plainVm(id));
    setup.standIn.faults.failNext(
      { method: 'POST', path: /\/actions\/shutdown$/ },
      { status: 423, code: 'locked', message: 'server is locked' },
    );
    setup.standIn.faults.failNext({ method: 'GET', path: /^\/servers/ }, 'drop');
    await setup.driver.powerOff(id);
    expect((await setup.driver.getServer(id))?.status).toBe('off');
    await setup.driver.deleteServer(id);
  });

  it('names the failures no retry fixes, and deleting what was made leaves nothing', async () => {
    const soldOut = randomUUID();
    setup.standIn.faults.unavailable('cpx22', 'hel1');
    const failure = await setup.driver.createServer(plainVm(soldOut)).catch((e: unknown) => e);
    setup.standIn.faults.clear();
    expect(failure).toBeInstanceOf(ComputeFailure);
    expect((failure as ComputeFailure).reason).toBe('resource_unavailable');
    // The firewall made before the refusal is what the lifecycle's cleanup removes.
    expect(firewallsOf(soldOut)).toHaveLength(1);
    expect((await setup.driver.listServers({ kind: 'plain_vm' })).map((s) => s.id)).toContain(
      soldOut,
    );
    await setup.driver.deleteServer(soldOut);
    expect(firewallsOf(soldOut)).toEqual([]);

    const noImage = randomUUID();
    const missing = await setup.driver
      .createServer(plainVm(noImage, { image: 'plan9-4' }))
      .catch((e: unknown) => e);
    expect((missing as ComputeFailure).reason).toBe('image_unavailable');
    expect(serversOf(noImage)).toEqual([]);
    await setup.driver.deleteServer(noImage);
  });

  it('lists servers by label, with machines of which only a firewall is left', async () => {
    const a = randomUUID();
    const b = randomUUID();
    await setup.driver.createServer(plainVm(a));
    await setup.driver.createServer(agent(b));
    const agents = await setup.driver.listServers({ managedBy: 'svc', kind: 'agent' });
    expect(agents.map((s) => s.id)).toContain(b);
    expect(agents.map((s) => s.id)).not.toContain(a);
    await setup.driver.deleteServer(a);
    await setup.driver.deleteServer(b);
  });
});
