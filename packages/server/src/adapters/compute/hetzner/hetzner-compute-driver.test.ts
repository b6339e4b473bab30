import { createPublicKey, randomUUID, X509Certificate } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { get } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_FIREWALL_RULES } from '@svc/contract';
import { pushPrivateKey } from '@svc/contract/agent-env-push';
import {
  GATEWAY_PREFIX,
  gatewayKeyFromToken,
  issueGatewayTicket,
} from '@svc/contract/gateway-ticket';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readAgentEnv } from '../../../../../cli/src/agent-env.js';
import { hetznerDriver, hetznerDriverForTests } from '../../../../test/hetzner/driver.js';
import {
  agentSpec,
  enrollingDriver as enrollingDriverOn,
  serversOf as serversOn,
  TEST_HMAC_KEY,
} from '../../../../test/hetzner/enrolling-driver.js';
import { issueAgentToken } from '../../../agents/agent-token.js';
import type { GatewayCa } from '../../../crypto/gateway-ca.js';
import { gatewayTarget } from '../../../edge/edge-routes.js';
import { createGatewayConnector, gatewayAnswers } from '../../../edge/gateway-connection.js';
import { ComputeFailure, type CreateServerSpec } from '../compute-driver.js';

// The hetzner driver against the stand-in of Hetzner Cloud's API, every request and answer
// checked against Hetzner's published description (HCLOUD_OPENAPI).

const setup = hetznerDriverForTests();

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

const agent = agentSpec;
const enrollingDriver = (extra: { homeSeedWaitMs?: number } = {}) =>
  enrollingDriverOn(setup.standIn, extra);
const serversOf = (id: string) => serversOn(setup.standIn, id);
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

  it('resizes a stopped server with change_type, growing its disk only with a larger size', async () => {
    const id = randomUUID();
    await setup.driver.createServer(plainVm(id));
    await expect(
      setup.driver.resize(id, { from: 'small', to: 'medium', region: 'eu' }),
    ).rejects.toThrow(/stopped/);
    await setup.driver.powerOff(id);
    await setup.driver.resize(id, { from: 'small', to: 'medium', region: 'eu' });
    const [server] = serversOf(id);
    expect(server?.serverType.name).toBe('cpx32');
    expect(server?.diskGb).toBe(server?.serverType.disk);
    // Same disk, other cores: the disk is not upgraded (upgrade_disk false), so it may go back.
    await setup.driver.resize(id, { from: 'medium', to: 'medium', region: 'eu' });
    expect(serversOf(id)[0]?.diskGb).toBe(server?.serverType.disk);
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

  it('makes an Agent whose cloud-init installs svc without its token, its gateway open to the edge only over TLS', async () => {
    const id = randomUUID();
    const info = await setup.driver.createServer(agent(id));
    expect(info.gateway).toEqual({ host: info.ipv4, port: 8443, tls: true });
    const [server] = serversOf(id);
    expect([server?.serverType.name, server?.location.name]).toEqual(['cpx31', 'hil']);
    expect(setup.standIn.state.images.get(server?.imageId as number)?.name).toBe('debian-12');
    // No bearer secret in user data: the token comes by the first push (below).
    expect(server?.userData).not.toContain('t0k');
    expect(server?.userData).not.toContain('SVC_HMAC_TOKEN');
    expect(server?.userData).toContain('SVC_ENROLL_KEY=');
    expect(server?.userData).toContain('https://svc.example/downloads/svc-linux-x64.tar.gz');
    // code-server from the npm registry once the gateway runs, which then restarts to serve it.
    const document = parse(server?.userData as string) as {
      write_files: { path: string; content: string }[];
      runcmd: (string | string[])[];
    };
    const installer = document.write_files.find((f) => f.path.endsWith('agent-code-server.sh'));
    expect(installer?.content).toContain('CODE_SERVER_VERSION=4.139.1');
    const steps = document.runcmd.map((step) => [step].flat().join(' '));
    const gatewayUp = steps.findIndex((step) => step.includes('enable --now svc-gateway'));
    const install = steps.findIndex((step) => step.includes(installer?.path as string));
    expect(gatewayUp).toBeGreaterThan(-1);
    expect(install).toBeGreaterThan(gatewayUp);
    expect(steps[install]).toContain('systemctl restart svc-gateway.service');
    expect(server?.userData).not.toContain('SVC_GATEWAY_BUILTIN_EDITOR');
    expect(await setup.driver.getFirewall(id)).toEqual([
      expect.objectContaining({ port: '8443', sourceIps: ['198.51.100.7/32'] }),
    ]);
    await setup.driver.deleteServer(id);
  });

  it("gets an Agent's first token to its gateway by push, over TLS, once it answers", async () => {
    const id = randomUUID();
    const token = issueAgentToken(TEST_HMAC_KEY, id, 0);
    const spec = agent(id, token);
    const { driver, boot } = await enrollingDriver();
    setup.standIn.pinNextIpv4('127.0.0.1');
    const made = driver.createServer(spec);
    const { env, gateway } = await boot(id);
    try {
      // The machine boots with nothing to open it with: no token, only its enrollment key.
      expect(env.SVC_HMAC_TOKEN).toBeUndefined();
      const info = await made;
      expect(await readAgentEnv(gateway.home)).toMatchObject({ SVC_HMAC_TOKEN: token });
      // Usable: the edge's own connection reaches it on the machine's certificate, and a ticket
      // signed with the pushed token opens it.
      const gateways = createGatewayConnector(driver.options.gatewayCa);
      const target = gatewayTarget(info);
      if (!target) throw new Error('no gateway');
      expect(await gatewayAnswers(gateways, target, AbortSignal.timeout(5_000))).toBe(true);
      const key = gatewayKeyFromToken(token)?.key as Buffer;
      const { ticket } = issueGatewayTicket(key, {
        agentId: id,
        gen: 0,
        nowSeconds: Math.floor(Date.now() / 1000),
      });
      const opened = await new Promise<number>((resolve, reject) => {
        const url = `${gateways.url(target)}${GATEWAY_PREFIX}/open?ticket=${ticket}`;
        get(url, { agent: gateways.agentFor(target) }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        }).on('error', reject);
      });
      expect(opened).toBe(302);
      gateways.close();
      // Left running into its certificate's last days, it gets a new one from the reconciler.
      const certFile = path.join(gateway.home, '.crabglamp/gateway-tls/cert.pem');
      const validTo = async () => new Date(new X509Certificate(await readFile(certFile)).validTo);
      const ownKey = createPublicKey(
        await readFile(path.join(gateway.home, '.crabglamp/gateway-tls/key.pem')),
      );
      const ca = driver.options.gatewayCa as GatewayCa;
      expect(await gateway.tls?.take(await ca.issueMachineCert(id, ownKey, 5))).toBeUndefined();
      const ending = await validTo();
      await driver.reconcile();
      expect((await validTo()).getTime()).toBeGreaterThan(ending.getTime() + 20 * 86_400_000);
      // A new token lands the same way; a push signed with another key is refused.
      await driver.setBootstrapEnv(id, { ...spec.bootstrapEnv, SVC_HMAC_TOKEN: 'renewed' });
      expect((await readAgentEnv(gateway.home)).SVC_HMAC_TOKEN).toBe('renewed');
      const impostor = await hetznerDriver(setup.standIn, {
        ...driver.options,
        pushKey: pushPrivateKey(Buffer.alloc(32, 9)),
      });
      await expect(impostor.setBootstrapEnv(id, { SVC_HMAC_TOKEN: 'evil' })).rejects.toThrow(/403/);
      expect((await readAgentEnv(gateway.home)).SVC_HMAC_TOKEN).toBe('renewed');
      // A stopped Agent cannot take it: the push job tries again later.
      await driver.powerOff(id);
      await expect(driver.setBootstrapEnv(id, spec.bootstrapEnv)).rejects.toThrow(/not running/);
      await driver.deleteServer(id);
    } finally {
      await gateway.close();
    }
  });

  it('gives the token to no gateway that cannot prove to be the machine', async () => {
    const id = randomUUID();
    const spec = agent(id, issueAgentToken(TEST_HMAC_KEY, id, 0));
    // A gateway at the machine's address whose enrollment key is another machine's.
    const { driver, boot } = await enrollingDriver({ homeSeedWaitMs: 5_000 });
    setup.standIn.pinNextIpv4('127.0.0.1');
    const made = driver.createServer(spec).catch((error: unknown) => error);
    const { gateway } = await boot(id, (userData) =>
      userData.replace(/SVC_ENROLL_KEY=\S+/, `SVC_ENROLL_KEY=${'A'.repeat(43)}`),
    );
    try {
      expect(String(await made)).toMatch(/did not prove to be machine/);
      expect((await readAgentEnv(gateway.home)).SVC_HMAC_TOKEN).toBeUndefined();
      await driver.deleteServer(id);
    } finally {
      await gateway.close();
    }
  });

  it("brings an adopted home in through the Agent's gateway once its server runs", async () => {
    const id = randomUUID();
    const seed = await mkdtemp(path.join(tmpdir(), 'svc-seed-src-'));
    const { driver, boot } = await enrollingDriver();
    const spec = agent(id, issueAgentToken(TEST_HMAC_KEY, id, 0));
    let gateway: { home: string; close(): Promise<void> } | undefined;
    try {
      await mkdir(path.join(seed, 'notes/deep'), { recursive: true });
      await writeFile(path.join(seed, 'notes/deep/a.md'), 'adopted\n');
      await mkdir(path.join(seed, '.openclaw'));
      await writeFile(path.join(seed, '.openclaw/.env'), "KEY='v'\n", { mode: 0o600 });
      setup.standIn.pinNextIpv4('127.0.0.1');
      const made = driver.createServer({ ...spec, homeSeed: seed });
      gateway = (await boot(id)).gateway;
      await made;
      expect(await readFile(path.join(gateway.home, 'notes/deep/a.md'), 'utf8')).toBe('adopted\n');
      const envFile = path.join(gateway.home, '.openclaw/.env');
      expect((await stat(envFile)).mode & 0o777).toBe(0o600);
      // A retry of the whole create (its answer lost) finds the home seeded with the same tree.
      await driver.createServer({ ...spec, homeSeed: seed });
      await driver.deleteServer(id);
    } finally {
      await gateway?.close();
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
