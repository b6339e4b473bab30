import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { promisify } from 'node:util';
import type { FirewallRule } from '@svc/contract';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIncusProject, INCUS_SOCKET, incusDriverOptions } from '../../../../test/incus.js';
import { incusExec } from '../../../../test/incus-exec.js';
import { waitFor } from '../../../../test/wait.js';
import { buildUserData } from '../cloud-init.js';
import type { CreateServerSpec } from '../compute-driver.js';
import { IncusBridgeFirewall } from './incus-bridge-firewall.js';
import { IncusClient } from './incus-client.js';
import { IncusComputeDriver, type IncusDriverOptions } from './incus-compute-driver.js';
import { GUARD_TABLE, guardNames } from './incus-host-guard.js';
import type { Instance } from './incus-instance.js';
import { MACHINE_ID_KEY, PROJECT_KEY } from './incus-instance-spec.js';

// A hostile tenant: root inside a real container made through the driver, attacking its
// neighbour, the host and the limits. Traffic goes only to the host's bridge address and to
// machines on the bridge; what lies beyond (link-local, private ranges, the host's other
// addresses) is checked by reading the rules (incus-egress.test.ts), never by sending to it.

const NETWORK = 'incusbr0';
const BRIDGE_HOST = '10.77.0.1';
const APP_PORT = 8000;
/** A port of the neighbour where it listens but its firewall does not open. */
const CLOSED_PORT = APP_PORT + 1;
const run = promisify(execFile);

let project: Awaited<ReturnType<typeof createIncusProject>>;
const newDriver = (extra: Partial<IncusDriverOptions> = {}) =>
  new IncusComputeDriver(
    incusDriverOptions(project.name, {
      network: NETWORK,
      serviceUrl: `http://localhost:${servicePort}`,
      ...extra,
    }),
    pino({ level: 'silent' }),
  );
let driver: IncusComputeDriver;
let client: IncusClient;
let service: http.Server;
let stray: net.Server;
let strayConnections = 0;
let servicePort = 0;
let strayPort = 0;
const marker = `/tmp/svc-host-only-${randomBytes(6).toString('hex')}`;
const victimId = randomUUID();
const attackerId = randomUUID();
/** An ACL of this test's own that it puts on the bridge and takes off, to make Incus rewrite. */
const churnAcl = `svc-t-churn-${randomBytes(4).toString('hex')}`;
let victim: { name: string; ip: string };
let attacker: { name: string; ip: string };

const appRule: FirewallRule = {
  direction: 'in',
  protocol: 'tcp',
  port: String(APP_PORT),
  sourceIps: ['0.0.0.0/0'],
  description: 'web',
};

const spec = (id: string, hostname: string): CreateServerSpec => ({
  id,
  size: 'small',
  region: 'eu',
  image: 'debian-12',
  bootstrapEnv: {},
  labels: { managedBy: 'svc-tenant-test', kind: 'plain_vm', plainVmId: id },
  userData: buildUserData({ hostname, defaultUser: 'debian', authorizedKeys: [] }),
  login: { user: 'debian', authorizedKeys: [] },
  firewall: [appRule],
});

const inside = (machine: { name: string }, script: string, timeoutMs?: number) =>
  incusExec(project.name, machine.name, script, timeoutMs);

/** One plain HTTP GET from the host, its body, or `undefined` when nothing answers in time. */
function fetchFromHost(host: string, port: number, urlPath = '/'): Promise<string | undefined> {
  return new Promise((resolve) => {
    const req = http.get({ host, port, path: urlPath, timeout: 3_000, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
      });
      res.on('end', () => resolve(body));
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
  });
}

const listen = (server: net.Server, host: string) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve((server.address() as net.AddressInfo).port));
  });

/** Boots a Plain VM through the driver and waits until its pinned address is up inside. */
async function machine(id: string, hostname: string) {
  const created = await driver.createServer(spec(id, hostname));
  const made = { name: `svc-${id}`, ip: created.ipv4 as string };
  await waitFor(
    async () => (await inside(made, 'ip -4 -o addr show eth0')).stdout.includes(` ${made.ip}/`),
    120_000,
    `${hostname}'s address`,
  );
  return made;
}

beforeAll(async () => {
  project = await createIncusProject();
  client = new IncusClient({ socketPath: INCUS_SOCKET, project: project.name });
  // The service machines reach (SVC_API_URL: the bridge's address for a loopback public URL).
  service = http.createServer((_req, res) => res.end('service\n'));
  servicePort = await listen(service, '0.0.0.0');
  // Any other port of the host: a tenant must not reach it.
  stray = net.createServer((socket) => {
    strayConnections += 1;
    socket.destroy();
  });
  strayPort = await listen(stray, BRIDGE_HOST);
  await writeFile(marker, 'host only\n');
  driver = newDriver();
  await driver.connect();
  [victim, attacker] = await Promise.all([
    machine(victimId, 'svc-victim'),
    machine(attackerId, 'svc-attacker'),
  ]);
  // The neighbour serves a page saying who it is, on the port its firewall opens and on one it
  // does not; each server's output is kept, to say why should one not come up.
  const serving = await inside(
    victim,
    `mkdir -p /srv/w && echo victim > /srv/w/who && cd /srv/w &&
     for port in ${APP_PORT} ${CLOSED_PORT}; do
       setsid nohup python3 -m http.server $port >/root/http-$port.log 2>&1 < /dev/null &
     done; echo started`,
  );
  expect(serving.stdout).toContain('started');
  await waitFor(
    async () => (await fetchFromHost(victim.ip, APP_PORT, '/who')) === 'victim\n',
    30_000,
    "the neighbour's page",
  );
}, 300_000);

afterAll(async () => {
  await new IncusBridgeFirewall(client, NETWORK).remove(churnAcl).catch(() => {});
  await Promise.allSettled([victimId, attackerId].map((id) => driver?.deleteServer(id)));
  await driver?.close();
  client?.close();
  service?.close();
  stray?.close();
  await rm(marker, { force: true });
  await project?.remove();
}, 180_000);

describe('a hostile tenant on Incus', { timeout: 180_000 }, () => {
  it('reaches, on the host, only the service and DNS', async () => {
    const askService = () =>
      inside(
        attacker,
        `timeout 5 bash -c 'exec 3<>/dev/tcp/${BRIDGE_HOST}/${servicePort};
          printf "GET / HTTP/1.0\\r\\n\\r\\n" >&3; cat <&3'`,
      );
    // Another test's change of the bridge's ACLs takes the bridge's address off for a few
    // milliseconds: a connection made then fails, so the one that must succeed may try again.
    let toService = await askService();
    for (let tries = 1; tries < 3 && !toService.stdout.includes('service'); tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      toService = await askService();
    }
    expect(toService.stdout, toService.stderr).toContain('service');

    const toStray = await inside(
      attacker,
      `timeout 5 bash -c '</dev/tcp/${BRIDGE_HOST}/${strayPort}' && echo connected || echo refused`,
    );
    expect(toStray.stdout.trim()).toBe('refused');
    expect(strayConnections).toBe(0);

    // The bridge's resolver over TCP and UDP (a query for localhost's A record).
    const dnsTcp = await inside(
      attacker,
      `timeout 5 bash -c '</dev/tcp/${BRIDGE_HOST}/53' && echo connected`,
    );
    expect(dnsTcp.stdout.trim()).toBe('connected');
    const dnsUdp = await inside(
      attacker,
      `python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5)
q = bytes.fromhex("abcd01000001000000000000") + b"\\x09localhost\\x00" + bytes.fromhex("00010001")
s.sendto(q, ("${BRIDGE_HOST}", 53)); print(s.recv(512)[:2].hex())'`,
    );
    expect(dnsUdp.stdout.trim()).toBe('abcd');

    // The host holds its own baseline for the bridge, with this service's port in it.
    const names = guardNames(NETWORK);
    const { stdout: guard } = await run('nft', ['list', 'table', 'inet', GUARD_TABLE]);
    expect(guard).toContain(`chain ${names.input}`);
    expect(guard).toContain(`iifname "${NETWORK}" drop`);
    expect(guard).toMatch(new RegExp(`${BRIDGE_HOST.replaceAll('.', '\\.')} \\. ${servicePort} `));
  });

  it("keeps the host's and the neighbour's closed ports closed while Incus rewrites the bridge's firewall", {
    timeout: 300_000,
  }, async () => {
    // Incus rewrites the bridge's whole firewall whenever its ACL list changes (a machine made
    // or deleted anywhere on the bridge): it deletes its chains and adds them back in several
    // steps, with no ACL in force between them. The test puts an ACL of its own on the bridge
    // and takes it off, four times; from before the first change to after the last, the
    // attacker tries, every few ms in turn, the host's closed port, the neighbour's closed port
    // and (to show the tries work) the neighbour's open one, each try left pending 3 s (a SYN
    // sent again can land in a gap too); the host also counts what reaches its port.
    const cycles = 4;
    const targets = {
      host: [BRIDGE_HOST, strayPort],
      neighbour: [victim.ip, CLOSED_PORT],
      open: [victim.ip, APP_PORT],
    };
    // Tries until the test says stop (after its last rewrite), then waits out the pending ones.
    let probing: () => void = () => {};
    const ready = new Promise<void>((resolve) => {
      probing = resolve;
    });
    const probe = incusExec(
      project.name,
      attacker.name,
      `rm -f /tmp/stop-probe; python3 -c '
import json, os, select, socket, time
targets = json.loads("""${JSON.stringify(targets)}""")
names = sorted(targets); tries = dict.fromkeys(names, 0); connected = dict.fromkeys(names, 0)
give_up = time.time() + 240; pending = {}; turn = 0; stopping = False
print("probing", flush=True)
while not stopping or pending:
    now = time.time()
    stopping = stopping or now > give_up or os.path.exists("/tmp/stop-probe")
    if not stopping:
        name = names[turn % len(names)]; turn += 1
        s = socket.socket(); s.setblocking(False); s.connect_ex(tuple(targets[name]))
        pending[s] = (name, now + 3); tries[name] += 1
    _, ready, _ = select.select([], list(pending), [], 0.005)
    for s in ready:
        if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0: connected[pending[s][0]] += 1
        s.close(); del pending[s]
    for s, (name, deadline) in list(pending.items()):
        if time.time() > deadline: s.close(); del pending[s]
print(json.dumps({"tries": tries, "connected": connected}))'`,
      280_000,
      (chunk) => {
        if (chunk.includes('probing')) probing();
      },
    );
    await Promise.race([ready, probe]);
    const churn = new IncusBridgeFirewall(client, NETWORK);
    const owner = { [MACHINE_ID_KEY]: randomUUID(), [PROJECT_KEY]: project.name };
    let rewrites = 0;
    for (let cycle = 0; cycle < cycles; cycle++) {
      await churn.replace(churnAcl, owner, '198.51.100.254', [appRule]);
      await churn.remove(churnAcl);
      rewrites += 2;
    }
    await inside(attacker, 'touch /tmp/stop-probe');
    const result = await probe;
    const { tries, connected } = JSON.parse(
      result.stdout.trim().split('\n').at(-1) ?? '',
    ) as Record<'tries' | 'connected', Record<keyof typeof targets, number>>;
    expect(rewrites).toBe(cycles * 2);
    expect(tries.host).toBeGreaterThan(100);
    expect(tries.neighbour).toBeGreaterThan(100);
    expect(connected.open, result.stdout).toBeGreaterThan(tries.open / 2);
    expect(connected.host, result.stdout).toBe(0);
    expect(connected.neighbour, result.stdout).toBe(0);
    expect(strayConnections).toBe(0);
  });

  it('reaches a neighbour only on the ports its firewall opens', async () => {
    // Both of the neighbour's servers answer on the neighbour itself...
    const local = await inside(
      victim,
      `for port in ${APP_PORT} ${CLOSED_PORT}; do
         for i in $(seq 50); do
           timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port; printf \\"GET /who HTTP/1.0\\r\\n\\r\\n\\" >&3; cat <&3" 2>/dev/null | grep -q victim && echo "$port serves" && break
           sleep 0.2
         done
       done; ss -ltn; cat /root/http-*.log`,
    );
    expect(local.stdout, local.stdout).toContain(`${APP_PORT} serves`);
    expect(local.stdout, local.stdout).toContain(`${CLOSED_PORT} serves`);
    // ...and to the attacker only the one its firewall opens.
    const get = (port: number) =>
      inside(
        attacker,
        `timeout 5 bash -c 'exec 3<>/dev/tcp/${victim.ip}/${port};
          printf "GET /who HTTP/1.0\\r\\n\\r\\n" >&3; cat <&3' && echo connected || echo refused`,
      );
    const open = await get(APP_PORT);
    expect(open.stdout).toContain('victim');
    const closed = await get(CLOSED_PORT);
    expect(closed.stdout.trim()).toBe('refused');
  });

  it('sees nothing of the host in /proc or its paths, as a host user no neighbour shares', async () => {
    const processes = await inside(attacker, 'ps -e -o comm=');
    const names = processes.stdout.split('\n').filter(Boolean);
    expect(names.length).toBeLessThan(100);
    for (const hostOnly of ['incusd', 'lxcfs', 'dnsmasq', 'node', 'vitest']) {
      expect(names, hostOnly).not.toContain(hostOnly);
    }
    const look = () =>
      inside(
        attacker,
        `for p in ${marker} /var/lib/incus /var/log/incus /work; do test -e "$p" && echo "visible $p"; done
         dmesg >/dev/null 2>&1 && echo "dmesg readable"; test -e /dev/incus && echo "guest API"; echo checked`,
      );
    // The script always ends saying "checked": an answer without it is an exec that never ran
    // (incus's own error on a loaded host, in stderr), so it is asked again; a finding is not.
    let paths = await look();
    for (let tries = 1; tries < 3 && !paths.stdout.includes('checked'); tries += 1) {
      paths = await look();
    }
    expect(paths.stdout.trim(), paths.stderr).toBe('checked');

    // Root inside is a host UID of its own: no other machine maps the same range.
    const mapOf = async (of: { name: string }) =>
      (await inside(of, 'cat /proc/self/uid_map')).stdout.trim().split(/\s+/).map(Number);
    const [attackerMap, victimMap] = await Promise.all([mapOf(attacker), mapOf(victim)]);
    expect(attackerMap[0]).toBe(0);
    expect(attackerMap[1]).toBeGreaterThanOrEqual(1_000_000);
    expect(attackerMap[2]).toBe(65_536);
    const [, victimBase = 0, victimSize = 0] = victimMap;
    const [, attackerBase = 0, attackerSize = 0] = attackerMap;
    const overlap =
      attackerBase < victimBase + victimSize && victimBase < attackerBase + attackerSize;
    expect(overlap, `uid maps ${attackerMap} and ${victimMap}`).toBe(false);
  });

  it('starts processes until refused at its limit while the host stays responsive', async () => {
    const holdS = 20;
    // Forks sleeping children until the kernel refuses, says so, holds them, then ends them.
    let output = '';
    let reported: (line: string) => void = () => {};
    const report = new Promise<string>((resolve) => {
      reported = resolve;
    });
    const bomb = incusExec(
      project.name,
      attacker.name,
      `python3 -c '
import os, time, sys
children = []
result = "never refused"
while len(children) < 3000:
    try:
        pid = os.fork()
    except OSError as error:
        result = "refused %d %d %.3f" % (len(children), error.errno, time.time())
        break
    if pid == 0:
        time.sleep(${holdS + 30}); os._exit(0)
    children.append(pid)
print(result, flush=True)
time.sleep(${holdS})
for pid in children: os.kill(pid, 9)
'`,
      120_000,
      (chunk) => {
        output += chunk;
        if (output.includes('\n')) reported(output.split('\n')[0] as string);
      },
    );
    // While it holds them, the host answers as usual: a process starts, the service answers,
    // another machine runs commands.
    const line = await Promise.race([report, bomb.then((result) => result.stdout)]);
    const checkedAt = Date.now() / 1000;
    const started = Date.now();
    await run('true');
    expect(await fetchFromHost('127.0.0.1', servicePort)).toBe('service\n');
    expect((await inside(victim, 'echo alive')).stdout).toBe('alive\n');
    const hostCheckMs = Date.now() - started;

    await bomb;
    const [word, count, errno, at] = line.trim().split(' ');
    expect(word, line).toBe('refused');
    // EAGAIN: the pids cgroup's limit (small at a quarter: 512 tasks, systemd's among them).
    expect(Number(errno)).toBe(11);
    expect(Number(count)).toBeGreaterThan(300);
    expect(Number(count)).toBeLessThan(512);
    // The checks ran while the machine was at its limit.
    expect(Number(at)).toBeLessThanOrEqual(checkedAt);
    expect(checkedAt).toBeLessThan(Number(at) + holdS);
    expect(hostCheckMs).toBeLessThan(10_000);
  });

  it("takes a neighbour's address and announces it: the host still reaches the neighbour alone", async () => {
    // Root adds the neighbour's address, listens on it, and claims it with ARP five times a second.
    const attack = await inside(
      attacker,
      `ip addr add ${victim.ip}/32 dev eth0 && cat > /root/attack.py <<'EOF'
import socket, struct, threading, time
victim = "${victim.ip}"
mac = bytes.fromhex(open("/sys/class/net/eth0/address").read().strip().replace(":", ""))
listener = socket.socket(); listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind((victim, ${APP_PORT})); listener.listen(16)
def serve():
    while True:
        conn, peer = listener.accept()
        with open("/root/stolen.log", "a") as log: log.write("%s\\n" % (peer,))
        conn.sendall(b"HTTP/1.0 200 OK\\r\\n\\r\\nattacker\\n"); conn.close()
threading.Thread(target=serve, daemon=True).start()
raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); raw.bind(("eth0", 0))
ip = socket.inet_aton(victim)
arp = struct.pack("!HHBBH", 1, 0x0800, 6, 4, 2) + mac + ip + b"\\xff" * 6 + ip
frame = b"\\xff" * 6 + mac + b"\\x08\\x06" + arp
while True:
    raw.send(frame); time.sleep(0.2)
EOF
       setsid nohup python3 /root/attack.py >/root/attack.out 2>&1 < /dev/null & sleep 1; cat /root/attack.out; echo launched`,
    );
    expect(attack.stdout.trim()).toBe('launched');
    // The host forgets the neighbour's MAC, so that it must ask again while the claims go on.
    await run('ip', ['neigh', 'del', victim.ip, 'dev', NETWORK]).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    for (let i = 0; i < 5; i++) {
      expect(await fetchFromHost(victim.ip, APP_PORT, '/who')).toBe('victim\n');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const victimMac = (await client.call<Instance>('GET', `/1.0/instances/${victim.name}`)).devices
      .eth0?.hwaddr;
    // The MAC the host holds for the address is the neighbour's (read right after a request:
    // an idle entry may be gone).
    const neighbour = await waitFor(
      async () => {
        await fetchFromHost(victim.ip, APP_PORT, '/who');
        const { stdout } = await run('ip', ['neigh', 'show', victim.ip, 'dev', NETWORK]);
        return stdout.match(/lladdr (\S+)/)?.[1];
      },
      15_000,
      "the host's neighbour entry",
    );
    expect(neighbour).toBe(victimMac);
    const stolen = await inside(attacker, 'cat /root/stolen.log 2>/dev/null; echo end');
    expect(stolen.stdout).toBe('end\n');
    expect((await driver.getServer(victimId))?.ipv4).toBe(victim.ip);
    await inside(attacker, `pkill -f /root/attack.py; ip addr del ${victim.ip}/32 dev eth0`);
  });

  it('changes its own address: the driver reports the pinned one, and the new one is unreachable', async () => {
    const used = new Set(
      (
        await client.call<Instance[]>('GET', '/1.0/instances', {
          query: { recursion: '1', 'all-projects': 'true' },
        })
      ).map((instance) => instance.devices?.eth0?.['ipv4.address']),
    );
    const leases = await client.call<{ address: string }[]>(
      'GET',
      `/1.0/networks/${NETWORK}/leases`,
    );
    for (const lease of leases) used.add(lease.address);
    let free = '';
    for (let n = 250; n > 100 && !free; n--) if (!used.has(`10.77.0.${n}`)) free = `10.77.0.${n}`;
    expect(free).not.toBe('');

    const moved = await inside(
      attacker,
      `cd /tmp && (setsid nohup python3 -m http.server ${APP_PORT} >/dev/null 2>&1 < /dev/null &)
       ip addr flush dev eth0 && ip addr add ${free}/24 dev eth0 &&
       ip route replace default via ${BRIDGE_HOST} && echo moved`,
    );
    expect(moved.stdout.trim()).toBe('moved');
    // Incus sees the new address on the running instance...
    await waitFor(
      async () => {
        const state = await client.call<{
          network?: Record<string, { addresses: { address: string }[] }>;
        }>('GET', `/1.0/instances/${attacker.name}/state`);
        return state.network?.eth0?.addresses.some((address) => address.address === free);
      },
      30_000,
      'the new address in Incus',
    );
    // ...but what the service is told, and where the edge and SSH would go, is the pinned one.
    expect((await driver.getServer(attackerId))?.ipv4).toBe(attacker.ip);
    const listed = await driver.listServers({ plainVmId: attackerId });
    expect(listed.map((server) => server.ipv4)).toEqual([attacker.ip]);
    expect(listed[0]?.ssh?.host).toBe(attacker.ip);
    // Nothing reaches the machine at the address it took.
    expect(await fetchFromHost(free, APP_PORT)).toBeUndefined();
  });

  it("renews its port in the host's table on its own timer, and the operator's in-process commands leave the table alone", async () => {
    const names = guardNames(NETWORK);
    const entry = `${BRIDGE_HOST} . ${servicePort}`;
    const listed = async () =>
      (await run('nft', ['list', 'set', 'inet', GUARD_TABLE, names.services])).stdout;
    const lapse = () =>
      run('nft', ['delete', 'element', 'inet', GUARD_TABLE, names.services, `{ ${entry} }`]);
    const renewing = newDriver({ hostGuardRenewMs: 500 });
    const adminPath = newDriver({ hostGuard: false, hostGuardRenewMs: 500 });
    try {
      // As if the entry had lapsed: the operator's command run in process does not write it.
      await lapse();
      await adminPath.connect();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(await listed()).not.toContain(entry);
      // A driver that wrote the table puts it back without any job or reconcile.
      await renewing.connect();
      await lapse();
      expect(await listed()).not.toContain(entry);
      await waitFor(async () => (await listed()).includes(entry), 10_000, 'the renewed entry');
    } finally {
      await renewing.close();
      await adminPath.close();
    }
  });
});
