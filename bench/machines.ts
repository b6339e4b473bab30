import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  addVaultEntry,
  cloneAgent,
  createAgent,
  createPlainVm,
  deleteAgent,
  deletePlainVm,
  getAgent,
  getPlainVm,
  signUp,
} from '@svc/contract';
import pg from 'pg';
import { IncusClient } from '../packages/server/src/adapters/compute/incus/incus-client.js';
import {
  instanceLimits,
  MACHINE_ID_KEY,
  POOL_CELL_KEY,
} from '../packages/server/src/adapters/compute/incus/incus-instance-spec.js';
import { POOL_READY_KEY } from '../packages/server/src/adapters/compute/incus/incus-warm-pool.js';
import { cleanUp } from '../packages/server/test/clean-up.js';
import { createIncusProject, INCUS_SOCKET } from '../packages/server/test/incus.js';
import { localRequest } from '../packages/server/test/localhost-http.js';
import { keyPair, ssh } from '../packages/server/test/openssh.js';
import { type LogLine, startServiceWithLog } from '../packages/server/test/service-log.js';
import { freePort, serviceClient, stopService } from '../packages/server/test/service-process.js';
import type { TestClient } from '../packages/server/test/test-client.js';
import { waitFor } from '../packages/server/test/wait.js';

// `npm run bench -- machines` (root, after `npm run incus:setup`; PostgreSQL at BENCH_DATABASE_URL,
// default postgres://postgres@127.0.0.1:5432/postgres, where it makes a database of its own): how
// long until a user can use a machine, through the HTTP API of the real service (`npm start`'s
// process, the incus driver on an Incus project of its own, the job queue as it runs). One
// machine at a time, so each number is a latency:
// - the floor: Incus's own launch → booted of the same image (debian-12, the Agent image), and its
//   own copy → booted of the Agent the clones are made from;
// - POST /api/plain-vms → `running` in the detail → first successful SSH as the default user;
// - POST /api/agents → `running` → first answer of the gateway's health check through the edge
//   (the Agent's URL on the service's own port, as a browser reaches it);
// - both again with a warm pool (INCUS_WARM_POOL; BENCH_POOL=0 leaves these out), each create
//   made once the pool is full, so it measures a claim and never a refill;
// - clones of a running Agent with a BENCH_CLONE_MB (200) MB home → `running`, and → the gateway.
// p50 and p95 over BENCH_MACHINES (10) of each, and their ratios to the floor; then where the
// time went, from what Incus and the service's log say.

const MACHINES = Number(process.env.BENCH_MACHINES ?? 10);
const CLONE_HOME_MB = Number(process.env.BENCH_CLONE_MB ?? 200);
const WITH_POOL = process.env.BENCH_POOL !== '0';
const DATABASE_URL =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** One of each: every measured create waits for a full pool, so one member is all it can claim. */
const WARM_POOL = 'plain_vm:debian-12:small:eu=1,agent:small:eu=1';
/** The size table's share the machines get, as the Incus tests use it. */
const SIZE_FACTOR = 0.25;
/** Anything slower than this is a failure, not a number. */
const WITHIN_MS = 180_000;

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
};
const seconds = (ms: number | undefined) =>
  ms === undefined ? '–' : `${(ms / 1000).toFixed(2)} s`;

/** Milestones of one create, in ms from the moment its request was sent. */
interface Timing {
  /** The API answered the POST (201). */
  posted: number;
  /** Incus first listed the machine's instance (polled every 100 ms; a claimed member at once). */
  incusCreated?: number;
  /** Incus first said it is Running. */
  incusRunning?: number;
  /** The service's own log line for the move: from the row's `provisioning` to its `running`. */
  serviceMove?: number;
  /** The detail said `running` (polled every 50 ms, as fast as the client looks). */
  running: number;
  /** The first SSH session, or the gateway's first answer through the edge. */
  ready: number;
  /** How long the successful SSH session took (connection, key exchange, `true`). */
  handshake?: number;
}

export async function run(): Promise<void> {
  const incusProject = await createIncusProject();
  // Incus's own instances, out of the service's sight (its reconciler owns its project).
  const floorProject = await createIncusProject();
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-bench-machines-'));
  const database = `svc_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const databaseUrl = new URL(DATABASE_URL);
  databaseUrl.pathname = `/${database}`;
  const incus = new IncusClient({ socketPath: INCUS_SOCKET, project: incusProject.name });
  const floorIncus = new IncusClient({ socketPath: INCUS_SOCKET, project: floorProject.name });
  const current: { service?: ChildProcess } = {};

  let cleaned: Promise<void> | undefined;
  const cleanEverything = () => {
    cleaned ??= cleanUp({
      service: async () => {
        if (current.service) await stopService(current.service, 'SIGTERM');
      },
      incus: async () => {
        incus.close();
        floorIncus.close();
      },
      project: () => incusProject.remove(),
      floorProject: () => floorProject.remove(),
      database: async () => {
        await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
        await admin.end();
      },
      dir: () => rm(dir, { recursive: true, force: true }),
    });
    return cleaned;
  };
  // An interrupted run leaves nothing behind either.
  const interrupted = (signal: NodeJS.Signals) => {
    console.error(`${signal}: cleaning up`);
    void cleanEverything().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);

  try {
    const port = await freePort();
    const base = `http://localhost:${port}`;
    /** Each move's duration as the service logged it, by machine id. */
    const moves = new Map<string, number>();
    const start = async (extra: Record<string, string>) => {
      current.service = startServiceWithLog(
        {
          DATA_DIR: dir,
          DATABASE_URL: databaseUrl.toString(),
          PORT: String(port),
          // Every address, as `npm start` listens: the Agents reach the service at the bridge's.
          HOST: '0.0.0.0',
          PUBLIC_URL: base,
          COMPUTE_DRIVER: 'incus',
          INCUS_SOCKET,
          INCUS_PROJECT: incusProject.name,
          INCUS_SIZE_FACTOR: String(SIZE_FACTOR),
          ...extra,
        },
        (line) => noteMove(line, moves),
      );
      await serviceClient(base).ready();
    };
    const { client } = serviceClient(base);

    await start({});
    await client.call(signUp, {
      body: { email: 'bench@example.com', password: 'benchmark password', name: 'Bench' },
    });
    const key = await keyPair(dir, 'bench');
    const vaultKey = (
      await client.call(addVaultEntry, {
        body: { type: 'ssh_key', label: 'bench', value: key.publicLine },
      })
    ).body.id;
    const machines = new Machines(client, incus, key.file, vaultKey, moves);
    const floors = new Floors(floorIncus);

    const results: Record<string, number[]> = {};
    const profiles: Record<string, Timing[]> = {};
    const record = (name: string, ms: number) => {
      results[name] ??= [];
      results[name].push(ms);
    };
    /** MACHINES creates measured by `measure`, one at a time; `value` is the number it reports. */
    const series = async (
      name: string,
      measure: (i: number) => Promise<Timing>,
      value: (timing: Timing) => number = (timing) => timing.ready,
    ) => {
      for (let i = 0; i < MACHINES; i++) {
        const timing = await measure(i);
        record(name, value(timing));
        profiles[name] = [...(profiles[name] ?? []), timing];
        process.stdout.write('.');
      }
      console.log(` ${name}`);
    };

    // Interleaved, floor then ours, so that whatever else the machine does slows both alike.
    const plainFloor = 'Incus launch → booted, debian-12';
    const agentFloor = 'Incus launch → booted, svc-agent';
    const plain = 'Plain VM: POST → running → SSH';
    const agent = 'Agent: POST → running → gateway via edge';
    await series(plain, async (i) => {
      record(plainFloor, await floors.launch('debian-12'));
      return machines.plainVm(`bench-${i}`);
    });
    await series(agent, async (i) => {
      record(agentFloor, await floors.launch('svc-agent'));
      return machines.agent(`bench ${i}`);
    });

    const source = await machines.runningAgent('bench clone source');
    await fillHome(incus, `svc-${source}`, CLONE_HOME_MB);
    const copyFloor = `Incus copy → booted, the ${CLONE_HOME_MB} MB Agent`;
    const clone = `Agent clone, ${CLONE_HOME_MB} MB home: POST → running`;
    const cloneGateway = `Agent clone, ${CLONE_HOME_MB} MB home: → gateway via edge`;
    await series(
      clone,
      async (i) => {
        record(copyFloor, await floors.copy(incusProject.name, `svc-${source}`));
        const timing = await machines.clone(source, `bench clone ${i}`);
        record(cloneGateway, timing.ready);
        return timing;
      },
      (timing) => timing.running,
    );
    await machines.destroyAgent(source);

    const plainPool = 'Plain VM, warm pool: POST → running → SSH';
    const agentPool = 'Agent, warm pool: POST → running → gateway via edge';
    if (WITH_POOL) {
      await stopService(current.service as ChildProcess, 'SIGTERM');
      await start({ INCUS_WARM_POOL: WARM_POOL });
      // Looked at every 250 ms: a refill is Incus at work, which a faster poll would slow.
      const full = async () => {
        const until = performance.now() + WITHIN_MS;
        while (!(await poolIsFull(incus))) {
          if (performance.now() > until) throw new Error('the warm pool did not fill in time');
          await sleep(250);
        }
      };
      await series(plainPool, async (i) => {
        await full();
        return machines.plainVm(`bench-pool-${i}`);
      });
      await series(agentPool, async (i) => {
        await full();
        return machines.agent(`bench pool ${i}`);
      });
    }

    console.log(
      `\n${MACHINES} of each, one at a time; ${new Date().toISOString()}; service on PostgreSQL, ` +
        `incus driver (containers, INCUS_SIZE_FACTOR ${SIZE_FACTOR}; small: the floor's size too)\n`,
    );
    const rows: [string, string, string | undefined][] = [
      [plainFloor, '', undefined],
      [agentFloor, '', undefined],
      [copyFloor, '', undefined],
      [plain, plainFloor, 'p50 ≤ 1.2×'],
      [agent, agentFloor, undefined],
      [clone, agentFloor, 'p50 ≤ 1.0×'],
      [cloneGateway, agentFloor, undefined],
      ...(WITH_POOL
        ? ([
            [plainPool, plainFloor, 'p50 ≤ 0.5×, p95 ≤ 1.0×'],
            [agentPool, agentFloor, 'p50 ≤ 0.5×, p95 ≤ 1.0×'],
          ] as [string, string, string][])
        : []),
    ];
    console.log('| | p50 | p95 | floor p50 | p50 ÷ floor | p95 ÷ floor | target |');
    console.log('|---|---|---|---|---|---|---|');
    for (const [name, floorName, target] of rows) {
      const ms = results[name] ?? [];
      const [p50, p95] = [percentile(ms, 50), percentile(ms, 95)];
      const floor = floorName ? percentile(results[floorName] ?? [], 50) : undefined;
      const ratio = (value: number) => (floor ? `${(value / floor).toFixed(2)}×` : '');
      console.log(
        `| ${name} | ${seconds(p50)} | ${seconds(p95)} | ${floor ? seconds(floor) : ''} | ` +
          `${ratio(p50)} | ${ratio(p95)} | ${target ?? ''} |`,
      );
    }
    console.log(
      `\nclone → running vs Incus's own copy → booted of the same Agent: ` +
        `${(percentile(results[clone] ?? [], 50) / percentile(results[copyFloor] ?? [], 50)).toFixed(2)}×`,
    );
    printProfiles(profiles);
  } finally {
    process.removeListener('SIGINT', interrupted);
    process.removeListener('SIGTERM', interrupted);
    await cleanEverything();
  }
}

/** Keeps the duration of each `… create: running` / `… clone: running` line the service logs. */
function noteMove(line: LogLine, moves: Map<string, number>) {
  const id = (line.agentId ?? line.plainVmId) as string | undefined;
  if (id && line.to === 'running' && typeof line.durationMs === 'number') {
    moves.set(id, line.durationMs);
  }
}

/** The service's machines, made, waited for and destroyed through its HTTP API. */
class Machines {
  constructor(
    readonly client: TestClient,
    readonly incus: IncusClient,
    readonly keyFile: string,
    readonly vaultKey: string,
    readonly moves: ReadonlyMap<string, number>,
  ) {}

  /** A Plain VM (debian-12, small, eu) its default user reaches with the bench's key. */
  async plainVm(name: string): Promise<Timing> {
    const sent = performance.now();
    const since = () => performance.now() - sent;
    const { id } = (
      await this.client.call(createPlainVm, {
        body: {
          name,
          tier: 'small',
          region: 'eu',
          osImageKey: 'debian-12',
          billingType: 'metered',
          access: { passwordEnabled: false, vaultEntryIds: [this.vaultKey] },
        },
      })
    ).body;
    const posted = since();
    const watch = watchInstance(this.incus, id, sent);
    const vm = await waitFor(
      async () => {
        const { body } = await this.client.call(getPlainVm, { params: { id } });
        return ['running', 'error'].includes(body.status) && body;
      },
      WITHIN_MS,
      `Plain VM ${name} running`,
    );
    if (vm.status !== 'running') throw new Error(`Plain VM ${name}: ${vm.statusReason}`);
    const running = since();
    const { host, port } = vm.ssh ?? {};
    if (!host || !port) throw new Error(`Plain VM ${name} runs with no SSH endpoint`);
    let handshake = 0;
    await waitFor(
      async () => {
        const tried = performance.now();
        const { code } = await ssh(port, vm.defaultUser, this.keyFile, 'true', host);
        handshake = performance.now() - tried;
        return code === 0;
      },
      WITHIN_MS,
      `SSH to ${name}`,
    );
    const ready = since();
    const timing = { posted, running, ready, handshake, ...(await watch()) };
    await this.client.call(deletePlainVm, { params: { id } });
    await waitFor(
      async () => (await this.client.send(getPlainVm, { params: { id } })).status === 404,
      WITHIN_MS,
      `Plain VM ${name} gone`,
    );
    return { ...timing, serviceMove: this.moves.get(id) };
  }

  /** An Agent (small, eu), until its gateway answers through the edge. */
  async agent(name: string): Promise<Timing> {
    const sent = performance.now();
    const { id } = (
      await this.client.call(createAgent, {
        body: { name, size: 'small', region: 'eu', billingType: 'metered' },
      })
    ).body;
    const timing = await this.untilGateway(id, sent);
    await this.destroyAgent(id);
    return timing;
  }

  /** A clone of `source`, until its gateway answers through the edge; destroyed after. */
  async clone(source: string, name: string): Promise<Timing> {
    const sent = performance.now();
    const { id } = (
      await this.client.call(cloneAgent, {
        params: { id: source },
        body: { name, size: 'small', billingType: 'metered' },
      })
    ).body;
    const timing = await this.untilGateway(id, sent);
    await this.destroyAgent(id);
    return timing;
  }

  /** An Agent left running (the clones' source); its id. */
  async runningAgent(name: string): Promise<string> {
    const { id } = (
      await this.client.call(createAgent, {
        body: { name, size: 'small', region: 'eu', billingType: 'metered' },
      })
    ).body;
    await this.untilGateway(id, performance.now());
    return id;
  }

  async destroyAgent(id: string): Promise<void> {
    await this.client.call(deleteAgent, { params: { id } });
    await waitFor(
      async () => (await this.client.send(getAgent, { params: { id } })).status === 404,
      WITHIN_MS,
      `Agent ${id} gone`,
    );
  }

  /** From `sent` (the POST's start): its answer, `running`, and the gateway's first answer. */
  async untilGateway(id: string, sent: number): Promise<Timing> {
    const since = () => performance.now() - sent;
    const posted = since();
    const watch = watchInstance(this.incus, id, sent);
    const agent = await waitFor(
      async () => {
        const { body } = await this.client.call(getAgent, { params: { id } });
        return ['running', 'error'].includes(body.status) && body;
      },
      WITHIN_MS,
      `Agent ${id} running`,
    );
    if (agent.status !== 'running') throw new Error(`Agent ${id}: ${agent.statusReason}`);
    const running = since();
    // As a browser asks: the Agent's URL, on the service's port, the edge proxying to the gateway.
    const health = new URL('/_svc/health', agent.url).toString();
    await waitFor(
      () =>
        localRequest(health).then(
          (res) => res.status === 200,
          () => false,
        ),
      WITHIN_MS,
      `the gateway of ${id} through the edge`,
    );
    const ready = since();
    return { posted, running, ready, ...(await watch()), serviceMove: this.moves.get(id) };
  }
}

/**
 * Polls Incus (every 100 ms) for the instance that holds machine `id` (by name, or by its
 * machine-id key, so a claimed pool member counts too) until it runs; the returned function stops
 * and answers when it was first listed and first Running, in ms from `sent`.
 */
function watchInstance(incus: IncusClient, id: string, sent: number) {
  const seen: { incusCreated?: number; incusRunning?: number } = {};
  let watching = true;
  const loop = (async () => {
    while (watching && seen.incusRunning === undefined) {
      const instances = await incus
        .call<{ name: string; status: string; config: Record<string, string> }[]>(
          'GET',
          '/1.0/instances',
          { query: { recursion: '1' } },
        )
        .catch(() => []);
      const at = performance.now() - sent;
      const mine = instances.find((i) => i.name === `svc-${id}` || i.config[MACHINE_ID_KEY] === id);
      if (mine) {
        seen.incusCreated ??= at;
        if (mine.status === 'Running') seen.incusRunning = at;
      }
      await sleep(100);
    }
  })();
  return async () => {
    watching = false;
    await loop;
    return seen;
  };
}

/** Incus on its own: what the service's numbers are measured against. */
class Floors {
  constructor(readonly incus: IncusClient) {}

  /** `incus launch` of the image (create, start) until systemd has booted it. */
  launch(image: string): Promise<number> {
    return this.#timed({ type: 'image', alias: image });
  }

  /** `incus copy` of a running instance of `project` (with its files), started, booted. */
  copy(project: string, instance: string): Promise<number> {
    return this.#timed({ type: 'copy', source: instance, project, instance_only: true });
  }

  async #timed(source: object): Promise<number> {
    const name = `bench-${randomBytes(4).toString('hex')}`;
    // On the bridge without any pinned address (a copy's would be its running source's).
    const devices = { eth0: { type: 'nic', network: 'incusbr0', name: 'eth0' } };
    // The size the service's machines get (small), so the ratio is what the service adds to
    // Incus and not a smaller machine booting slower: on this host small is one CPU of two.
    const limits = instanceLimits('small', 'eu', SIZE_FACTOR);
    const config = {
      'limits.cpu': String(limits.cpu),
      'limits.memory': `${limits.memoryMiB}MiB`,
    };
    const started = performance.now();
    try {
      await this.incus.call('POST', '/1.0/instances', {
        body: { name, type: 'container', source, devices, config },
      });
      await this.incus.call('PUT', `/1.0/instances/${name}/state`, { body: { action: 'start' } });
      await this.#booted(name);
      return performance.now() - started;
    } finally {
      await this.incus
        .call('PUT', `/1.0/instances/${name}/state`, { body: { action: 'stop', force: true } })
        .catch(() => {});
      await this.incus.call('DELETE', `/1.0/instances/${name}`);
    }
  }

  /**
   * Booted: systemd has reached multi-user.target, the image's default, where sshd and the Agent's
   * gateway run. One exec through the Incus API, `systemctl start multi-user.target`, which joins
   * the boot's own start job and returns when it is done; tried again only while systemd is not
   * yet up to take it. Not `is-system-running --wait`: that also waits for cloud-init's config and
   * final stages (9-11 s more on this machine), which run after multi-user and which neither SSH
   * nor the gateway waits for, so a floor that included them would flatter the service.
   */
  async #booted(name: string) {
    await waitFor(
      async () => {
        const started = await this.incus
          .exec(name, ['systemctl', 'start', 'multi-user.target'])
          .catch(() => ({ code: -1 }));
        return started.code === 0;
      },
      WITHIN_MS,
      `${name} booted`,
    );
  }
}

/** Writes `mb` MB of incompressible data into the Agent's home, in 1 MB appends (Incus drops a single request that large). */
async function fillHome(incus: IncusClient, instance: string, mb: number) {
  for (let i = 0; i < mb; i++) {
    await incus.call('POST', `/1.0/instances/${instance}/files`, {
      query: { path: '/home/agent/blob' },
      raw: randomBytes(1024 * 1024),
      headers: {
        'Content-Type': 'application/octet-stream',
        'X-Incus-type': 'file',
        'X-Incus-write': i === 0 ? 'overwrite' : 'append',
        'X-Incus-uid': '1000',
        'X-Incus-gid': '1000',
        'X-Incus-mode': '0600',
      },
    });
  }
}

/**
 * Whether every cell of WARM_POOL holds its count of ready members (booted, checked and not
 * claimed), counted as the pool counts them: by their instances' config in Incus.
 */
async function poolIsFull(incus: IncusClient): Promise<boolean> {
  const instances = await incus.call<{ status: string; config: Record<string, string> }[]>(
    'GET',
    '/1.0/instances',
    { query: { recursion: '1' } },
  );
  return WARM_POOL.split(',').every((entry) => {
    const [cell, count] = entry.split('=');
    const ready = instances.filter(
      ({ config, status }) =>
        config[POOL_CELL_KEY] === cell &&
        config[POOL_READY_KEY] &&
        config[MACHINE_ID_KEY] === undefined &&
        status === 'Running',
    );
    return ready.length >= Number(count);
  });
}

/** The p50 of each milestone per series: where the time goes. */
function printProfiles(profiles: Record<string, Timing[]>) {
  const milestones: [keyof Timing, string][] = [
    ['posted', 'POST answered'],
    ['incusCreated', 'Incus lists the instance'],
    ['incusRunning', 'Incus: Running'],
    ['serviceMove', "service's move (its log)"],
    ['running', 'detail: running'],
    ['ready', 'SSH / gateway answers'],
    ['handshake', 'the successful SSH session'],
  ];
  console.log('\nwhere the time goes (p50 of each milestone, from the POST):\n');
  const names = Object.keys(profiles);
  console.log(`| | ${names.join(' | ')} |`);
  console.log(`|---|${names.map(() => '---').join('|')}|`);
  for (const [key, label] of milestones) {
    const cells = names.map((name) => {
      const values = (profiles[name] ?? [])
        .map((timing) => timing[key])
        .filter((v): v is number => v !== undefined);
      return values.length ? seconds(percentile(values, 50)) : '–';
    });
    console.log(`| ${label} | ${cells.join(' | ')} |`);
  }
}
