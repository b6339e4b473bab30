import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_FIREWALL_RULES } from '@svc/contract';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIncusProject, INCUS_SOCKET, incusDriverOptions } from '../../../../test/incus.js';
import { incusExec } from '../../../../test/incus-exec.js';
import { keyPair, ssh } from '../../../../test/openssh.js';
import { waitFor } from '../../../../test/wait.js';
import { runAdminCommand } from '../../../admin/commands.js';
import type { AppContext } from '../../../context.js';
import { GatewayCa } from '../../../crypto/gateway-ca.js';
import type { Database } from '../../../db/database.js';
import { createMetrics } from '../../../metrics/metrics.js';
import { buildUserData, hashPasswordForShadow } from '../cloud-init.js';
import type { CreateServerSpec } from '../compute-driver.js';
import { IncusClient } from './incus-client.js';
import { IncusComputeDriver } from './incus-compute-driver.js';
import { MACHINE_ID_KEY } from './incus-instance-spec.js';

// The warm pool on the real daemon: a machine claimed from it must be what a freshly launched one
// of the same spec is, file by file, and the pool must be refilled, shown, and never listed or
// handed out twice.

const PLAIN_CELL = 'plain_vm:debian-12:small:eu';
const AGENT_CELL = 'agent:small:eu';

let project: Awaited<ReturnType<typeof createIncusProject>>;
let pooled: IncusComputeDriver;
let fresh: IncusComputeDriver;
let client: IncusClient;
let dir: string;
let key: { file: string; publicLine: string };
const made: string[] = [];

/** One hash for both machines, so their shadow files can be compared. */
const passwordHash = hashPasswordForShadow('one-time-password');

const plainVm = (id: string): CreateServerSpec => {
  const authorizedKeys = [key.publicLine];
  return {
    id,
    size: 'small',
    region: 'eu',
    image: 'debian-12',
    bootstrapEnv: {},
    labels: { managedBy: 'svc-pool-test', kind: 'plain_vm' },
    userData: buildUserData({
      hostname: 'same-name',
      defaultUser: 'debian',
      authorizedKeys,
      passwordHash,
    }),
    login: { user: 'debian', authorizedKeys, passwordHash, hostname: 'same-name' },
    firewall: DEFAULT_FIREWALL_RULES,
  };
};

/** What a tenant's machine is made of, minus what differs between any two machines. */
const PLAIN_PROBE = `
cloud-init status --wait >/dev/null
echo "== passwd"; getent passwd | sort
echo "== group"; getent group | sort
echo "== shadow"; cut -d: -f1,2,4- /etc/shadow | sort
echo "== keys"; cat /home/debian/.ssh/authorized_keys; stat -c '%n %a %U %G' /home/debian/.ssh /home/debian/.ssh/authorized_keys
echo "== sudoers"; for f in /etc/sudoers.d/*; do echo "$f"; sed 's/ on .* +0000$/ on <time>/' "$f"; done
echo "== hostname"; cat /etc/hostname; hostname
echo "== hosts"; cat /etc/hosts
echo "== sshd"; sshd -T 2>/dev/null | grep -E '^(passwordauthentication|permitrootlogin|pubkeyauthentication) '
echo "== home"; ls -A /home/debian
echo "== cloud-init"; cloud-init status
echo "== seed"; cat /var/lib/cloud/seed/nocloud-net/user-data
echo "== machine-id"; test -s /etc/machine-id && echo present
`;

const AGENT_PROBE = `
# The gateway starts the editor, which writes its settings into the home: wait for them.
for i in $(seq 60); do test -e /home/agent/.config/code-server/config.yaml && break; sleep 0.5; done
echo "== hostname"; cat /etc/hostname 2>/dev/null; hostname
echo "== hosts"; cat /etc/hosts
echo "== home"; ls -A /home/agent /home/agent/.crabglamp /home/agent/.config
echo "== env keys"; cut -d= -f1 /home/agent/.crabglamp/agent.env | sort
echo "== passwd"; getent passwd | sort
echo "== gateway"; systemctl is-active svc-gateway.service
echo "== machine-id"; test -s /etc/machine-id && echo present
`;

const instanceOf = async (id: string) => {
  const [instance] = await client.call<{ name: string }[]>('GET', '/1.0/instances', {
    query: { recursion: '1', filter: `config.${MACHINE_ID_KEY} eq ${id}` },
  });
  if (!instance) throw new Error(`no instance for machine ${id}`);
  return instance.name;
};

const probe = async (id: string, script: string, ids: Record<string, string>) => {
  const result = await incusExec(project.name, await instanceOf(id), script, 120_000);
  expect(result.code, result.stderr).toBe(0);
  // The machine's own id and name appear in a few files: the same placeholder for both.
  return Object.entries(ids).reduce((text, [from, to]) => text.replaceAll(from, to), result.stdout);
};

const poolFull = () =>
  waitFor(
    async () => (await pooled.poolStatus()).every((cell) => cell.ready >= cell.want),
    300_000,
    'the warm pool filled',
  );

beforeAll(async () => {
  project = await createIncusProject();
  client = new IncusClient({ socketPath: INCUS_SOCKET, project: project.name });
  dir = await mkdtemp(path.join(tmpdir(), 'svc-pool-'));
  key = await keyPair(dir, 'pool-key');
  const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const { cert, key: caKey } = await GatewayCa.generate();
  const gatewayCa = new GatewayCa(cert, caKey);
  pooled = new IncusComputeDriver(
    incusDriverOptions(project.name, {
      warmPool: [
        { kind: 'plain_vm', image: 'debian-12', size: 'small', region: 'eu', count: 1 },
        { kind: 'agent', size: 'small', region: 'eu', count: 1 },
      ],
      gatewayCa,
    }),
    log,
  );
  // The same project without a pool: every create launches.
  fresh = new IncusComputeDriver(incusDriverOptions(project.name, { gatewayCa }), log);
  await pooled.connect();
  await fresh.connect();
  // As a process that runs jobs does: it keeps the pool full.
  pooled.start();
}, 120_000);

afterAll(async () => {
  await pooled?.close();
  await fresh?.close();
  client?.close();
  await project?.remove();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 300_000);

describe('the warm pool on Incus', () => {
  it('fills each cell, shows it, and lists no member as a machine', async () => {
    await poolFull();
    expect(await pooled.poolStatus()).toEqual([
      { cell: PLAIN_CELL, want: 1, ready: 1, starting: 0 },
      { cell: AGENT_CELL, want: 1, ready: 1, starting: 0 },
    ]);
    expect(await pooled.listServers({})).toEqual([]);
    // What the operator sees: `npm run admin -- pool status` and /metrics.
    const ctx = { compute: pooled } as unknown as AppContext;
    expect(await runAdminCommand(ctx, 'pool status', {})).toEqual(await pooled.poolStatus());
    const metrics = createMetrics({
      database: undefined as unknown as Database,
      log: pino({ level: 'silent' }),
      poolStatus: () => pooled.poolStatus(),
    });
    const text = await metrics.registry.getSingleMetricAsString('svc_warm_pool_machines');
    expect(text).toContain(`svc_warm_pool_machines{cell="${PLAIN_CELL}",state="ready"} 1`);
    expect(text).toContain(`svc_warm_pool_machines{cell="${AGENT_CELL}",state="wanted"} 1`);
  }, 400_000);

  it('hands out a Plain VM that is, file by file, what a fresh one of the same spec is', async () => {
    await poolFull();
    const [member] = await client.call<{ name: string }[]>('GET', '/1.0/instances', {
      query: { recursion: '1', filter: `config.user.svc.pool-cell eq ${PLAIN_CELL}` },
    });
    const memberName = member?.name as string;
    const memberMachineId = (await incusExec(project.name, memberName, 'cat /etc/machine-id'))
      .stdout;

    const claimedId = randomUUID();
    const freshId = randomUUID();
    made.push(claimedId, freshId);
    const claimed = await pooled.createServer(plainVm(claimedId));
    expect(await instanceOf(claimedId)).toBe(memberName);
    const launched = await fresh.createServer(plainVm(freshId));
    expect(await instanceOf(freshId)).toBe(`svc-${freshId}`);
    expect(claimed).toMatchObject({ id: claimedId, status: 'running' });
    expect(launched).toMatchObject({ id: freshId, status: 'running' });

    const [a, b] = await Promise.all([
      probe(claimedId, PLAIN_PROBE, { [claimedId]: '<id>', [memberName]: '<name>' }),
      probe(freshId, PLAIN_PROBE, { [freshId]: '<id>', [`svc-${freshId}`]: '<name>' }),
    ]);
    expect(a).toBe(b);
    expect(a).toContain('passwordauthentication yes');
    // Password login works on both: the hash set, not locked.
    expect(a).toContain(`debian:${passwordHash}:`);

    // Its own machine id, and its tenant's key lets them in.
    const claimedMachineId = (await incusExec(project.name, memberName, 'cat /etc/machine-id'))
      .stdout;
    expect(claimedMachineId.trim()).toMatch(/^[0-9a-f]{32}$/);
    expect(claimedMachineId).not.toBe(memberMachineId);
    const login = await ssh(22, 'debian', key.file, 'hostname', claimed.ssh?.host as string);
    expect(login).toMatchObject({ code: 0, stdout: 'same-name\n' });
    expect(
      (await pooled.listServers({ managedBy: 'svc-pool-test' })).map((s) => s.id).sort(),
    ).toEqual([claimedId, freshId].sort());
    // Its firewall is the tenant's, as the fresh one's is.
    expect(await pooled.getFirewall(claimedId)).toEqual(await fresh.getFirewall(freshId));

    // After a reboot it is still the same machine (cloud-init does not run again over it).
    await pooled.reboot(claimedId);
    await waitFor(
      async () =>
        (await ssh(22, 'debian', key.file, 'true', claimed.ssh?.host as string)).code === 0,
      120_000,
      'ssh after the reboot',
    );
    const rebooted = await probe(claimedId, PLAIN_PROBE, {
      [claimedId]: '<id>',
      [memberName]: '<name>',
    });
    expect(rebooted).toBe(a);

    // Deleting it removes the member's instance and firewall; the pool is refilled meanwhile.
    await pooled.deleteServer(claimedId);
    expect(await pooled.getServer(claimedId)).toBeUndefined();
    const acls = await client.call<string[]>('GET', '/1.0/network-acls');
    expect(acls.some((url) => url.endsWith(`/${memberName}`))).toBe(false);
    await poolFull();
  }, 600_000);

  it('hands one member to one of two creates at once; the other launches', async () => {
    await poolFull();
    const ids = [randomUUID(), randomUUID()];
    made.push(...ids);
    await Promise.all(ids.map((id) => pooled.createServer(plainVm(id))));
    const names = await Promise.all(ids.map((id) => instanceOf(id)));
    expect(names.filter((name) => name.startsWith('svc-pool-'))).toHaveLength(1);
    expect(new Set(names).size).toBe(2);
    for (const id of ids) await pooled.deleteServer(id);
  }, 600_000);

  it('hands out an Agent whose gateway answers on its own credentials, like a fresh one', async () => {
    await poolFull();
    const claimedId = randomUUID();
    const freshId = randomUUID();
    made.push(claimedId, freshId);
    const agent = (id: string): CreateServerSpec => ({
      id,
      size: 'small',
      region: 'eu',
      bootstrapEnv: {
        SVC_API_URL: 'http://127.0.0.1:9/',
        SVC_AGENT_ID: id,
        SVC_HMAC_TOKEN: `svc1.${id}.1.${'a'.repeat(43)}`,
      },
      labels: { managedBy: 'svc-pool-test', kind: 'agent' },
    });
    const claimed = await pooled.createServer(agent(claimedId));
    expect(await instanceOf(claimedId)).toMatch(/^svc-pool-/);
    await fresh.createServer(agent(freshId));
    // Its gateway listening on its own certificate (the edge's tests check what it serves).
    for (const id of [claimedId, freshId]) {
      const name = await instanceOf(id);
      await waitFor(
        async () =>
          (await incusExec(project.name, name, "ss -ltnH 'sport = :8443' | grep -q .")).code === 0,
        60_000,
        `the gateway of ${id}`,
      );
    }
    const claimedName = await instanceOf(claimedId);
    const [a, b] = await Promise.all([
      probe(claimedId, AGENT_PROBE, { [claimedId]: '<id>', [claimedName]: '<name>' }),
      probe(freshId, AGENT_PROBE, { [freshId]: '<id>', [`svc-${freshId}`]: '<name>' }),
    ]);
    expect(a).toBe(b);
    expect(a).toContain(`svc-<id>`);
    expect(claimed).toMatchObject({ id: claimedId, status: 'running' });
  }, 600_000);
});

afterAll(async () => {
  await Promise.allSettled(made.map((id) => pooled.deleteServer(id)));
}, 300_000);
