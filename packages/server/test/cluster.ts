import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { haproxyConfig } from '../src/deploy/haproxy-config.js';
import { type S3StandIn, s3StandIn } from './s3-stand-in.js';
import { freePort } from './service-process.js';
import { TEST_ENV } from './test-context.js';
import { parentEnv } from './test-db.js';
import { waitFor } from './wait.js';

const MAIN = path.join(import.meta.dirname, '../src/main.ts');
/** How often HAProxy asks each server's /readyz (ms): two failures in a row take it out. */
const CHECK_INTERVAL_MS = 500;
/** Long enough for HAProxy to have seen a stopping process's /readyz fail (a few checks). */
const DRAIN_SECONDS = 3;

export type ClusterRole = 'api' | 'worker' | 'edge';

/** One process of the cluster, which the test may stop and start again on the same port. */
export interface ClusterProcess {
  readonly name: string;
  readonly role: ClusterRole;
  readonly port: number;
  /** The running process's id (a restart gives a new one). */
  readonly pid: number | undefined;
  /** How it ended when it ended without `stop` (its exit code or signal), else `undefined`. */
  readonly exited: string | number | undefined;
  /** SIGTERM (a rolling restart's stop), waits for the exit; answers its exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Starts it again and waits until it is started (HTTP roles: until its /readyz passes). */
  start(): Promise<void>;
}

/**
 * The service as operators run it at scale, on this machine: three `api` processes, two
 * `worker`s and one `edge`, on one PostgreSQL database (a fresh one on `serverUrl`'s server), one
 * S3 bucket (s3rver) and one data directory (the local compute driver's machines), behind HAProxy
 * configured by `haproxyConfig`. `url` is HAProxy's.
 */
export async function startCluster(
  serverUrl: string,
  options: {
    /** More variables for every process, given HAProxy's URL (an OAuth stand-in's callback). */
    env?: (publicUrl: string) => Promise<Record<string, string>>;
  } = {},
) {
  const database = `svc_cluster_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${database}`);
  await admin.end();
  const databaseUrl = new URL(serverUrl);
  databaseUrl.pathname = `/${database}`;

  const dir = await mkdtemp(path.join(tmpdir(), 'svc-cluster-'));
  const s3Server = (port: number) => s3StandIn({ directory: path.join(dir, 's3'), port });
  let s3: S3StandIn | undefined = s3Server(0);
  const { port: s3Port } = await s3.run();

  const lbPort = await freePort();
  const url = `http://localhost:${lbPort}`;
  const env: Record<string, string> = {
    ...TEST_ENV,
    LOG_LEVEL: 'info',
    DATABASE_URL: databaseUrl.toString(),
    DATA_DIR: path.join(dir, 'data'),
    HOST: '127.0.0.1',
    PUBLIC_URL: url,
    OBJECT_STORE: 's3',
    S3_BUCKET: 'bundles',
    S3_REGION: 'us-east-1',
    S3_ENDPOINT: `http://127.0.0.1:${s3Port}`,
    S3_FORCE_PATH_STYLE: 'true',
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    SHUTDOWN_DRAIN_SECONDS: String(DRAIN_SECONDS),
    SHUTDOWN_GRACE_SECONDS: '30',
    // A job whose worker was killed is failed and retried after 10 to 20 s, not 30 to 60.
    JOB_HEARTBEAT_SECONDS: '10',
    ...(await options.env?.(url)),
  };
  const logs: string[] = [];

  const processOf = async (name: string, role: ClusterRole): Promise<ClusterProcess> => {
    const port = role === 'worker' ? 0 : await freePort();
    let child: ChildProcess | undefined;
    return {
      name,
      role,
      port,
      get pid() {
        return child?.pid;
      },
      get exited() {
        return child?.exitCode ?? child?.signalCode ?? undefined;
      },
      async start() {
        let output = '';
        const started = spawn(process.execPath, ['--import', 'tsx', MAIN, `--role=${role}`], {
          env: { ...parentEnv(), ...env, ...(port && { PORT: String(port) }) },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        child = started;
        started.stdout?.on('data', (chunk: Buffer) => {
          output += chunk;
        });
        started.stderr?.on('data', (chunk: Buffer) => logs.push(`${name}: ${chunk}`));
        await waitFor(
          () => {
            if (started.exitCode !== null)
              throw new Error(`${name} exited: ${output.slice(-2000)}`);
            return output.includes('"msg":"started"');
          },
          120_000,
          `${name} started`,
        );
        // Errors a process logged are the test's business: kept for its report.
        started.stdout?.on('data', (chunk: Buffer) => {
          for (const line of String(chunk).split('\n')) {
            if (/"level":(50|60)/.test(line)) logs.push(`${name}: ${line}`);
          }
        });
      },
      async stop(signal = 'SIGTERM') {
        const running = child;
        if (!running || running.exitCode !== null || running.signalCode !== null) return null;
        const exited = new Promise<number | null>((resolve) =>
          running.once('exit', (code) => resolve(code)),
        );
        running.kill(signal);
        return exited;
      },
    };
  };

  const processes: ClusterProcess[] = [];
  for (const [name, role] of [
    ['api1', 'api'],
    ['api2', 'api'],
    ['api3', 'api'],
    ['worker1', 'worker'],
    ['worker2', 'worker'],
    ['edge1', 'edge'],
  ] as const) {
    processes.push(await processOf(name, role));
  }
  // The first applies the migrations; the others start together.
  await processes[0]?.start();
  await Promise.all(processes.slice(1).map((p) => p.start()));

  const config = haproxyConfig({
    listen: `127.0.0.1:${lbPort}`,
    api: processes.filter((p) => p.role === 'api').map((p) => `127.0.0.1:${p.port}`),
    edge: processes.filter((p) => p.role === 'edge').map((p) => `127.0.0.1:${p.port}`),
    agentDomain: 'localhost',
    checkIntervalMs: CHECK_INTERVAL_MS,
  });
  const configFile = path.join(dir, 'haproxy.cfg');
  await writeFile(configFile, config);
  const haproxy = spawn('haproxy', ['-db', '-f', configFile], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  haproxy.stderr?.on('data', (chunk: Buffer) => logs.push(`haproxy: ${chunk}`));
  await waitFor(
    () => {
      if (haproxy.exitCode !== null) throw new Error(`HAProxy exited ${haproxy.exitCode}`);
      return fetch(`http://127.0.0.1:${lbPort}/readyz`).then(
        (res) => res.ok,
        () => false,
      );
    },
    30_000,
    'HAProxy passing to a ready API process',
  ).catch((error: Error) => {
    throw new Error(`${error.message}:\n${logs.join('\n')}`);
  });

  return {
    url,
    /** The cluster's own database. */
    databaseUrl: databaseUrl.toString(),
    /** The processes' DATA_DIR: the local driver's machines are under `machines/`. */
    dataDir: env.DATA_DIR as string,
    processes,
    /** The S3 stand-in, which a test may stop (connections refused) and start again. */
    s3: {
      endpoint: `http://127.0.0.1:${s3Port}`,
      async stop() {
        await s3?.close();
        s3 = undefined;
      },
      async start() {
        s3 = s3Server(s3Port);
        await s3.run();
      },
    },
    /** The local driver's machine records: what exists, whatever the database says. */
    async machines() {
      const root = path.join(env.DATA_DIR as string, 'machines');
      const records: { id: string; status: string; labels: Record<string, string> }[] = [];
      for (const id of await readdir(root).catch(() => [] as string[])) {
        const file = path.join(root, id, 'machine.json');
        const text = await readFile(file, 'utf8').catch(() => undefined);
        if (text) records.push(JSON.parse(text));
      }
      return records;
    },
    /** Lines the processes logged at error level or above, and HAProxy's complaints. */
    logs,
    async stop() {
      haproxy.kill('SIGTERM');
      await Promise.all(processes.map((p) => p.stop('SIGKILL')));
      await s3?.close();
      // The local driver's machines run detached in homes under `dir`: none outlives the test.
      await killProcessesUnder(dir);
      await rm(dir, { recursive: true, force: true });
      const cleanup = new pg.Client({ connectionString: serverUrl });
      await cleanup.connect();
      await cleanup.query(`drop database if exists ${database} with (force)`);
      await cleanup.end();
    },
  };
}

export type Cluster = Awaited<ReturnType<typeof startCluster>>;

/** SIGKILLs every process whose working directory is under `dir`. */
async function killProcessesUnder(dir: string): Promise<void> {
  for (const pid of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(pid)) continue;
    const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => '');
    if (cwd.startsWith(dir)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {}
    }
  }
}
