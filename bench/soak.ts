import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { startCluster } from '../packages/server/test/cluster.js';
import { appsStandIn, ClusterMix, timings } from '../packages/server/test/cluster-mix.js';
import type { StandIn } from '../packages/server/test/stand-in-provider.js';

// `npm run bench -- soak` (not in CI): the cluster of `npm run test:cluster` (three api
// processes, two workers, an edge, HAProxy, the S3 stand-in) on the PostgreSQL server at
// TEST_DATABASE_URL (a database of its own), driven for SOAK_MINUTES by SOAK_USERS simulated
// users, each pausing a second between moves. One user in ten owns a Plain VM, an Agent and an
// app connection and runs the whole mix (Agent lives, firewall changes, app-token reads, bundle
// publishes); the others sign in now and then and list their Agents. Prints each route's
// p50/p99, the errors, and each process's RSS at start and end with its growth per 1,000
// requests.

const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const USERS = Number(process.env.SOAK_USERS ?? 100);
const SERVER_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A process's resident memory in MiB, from /proc. */
async function rssMiB(pid: number | undefined): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kib / 1024;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

export async function run(): Promise<void> {
  let standIn: StandIn | undefined;
  const cluster = await startCluster(SERVER_URL, {
    env: async (url) => {
      standIn = await appsStandIn(url);
      // Each user says it comes from an address of its own through an outer proxy.
      return { ...standIn.env(), TRUST_PROXY: 'true', TRUSTED_PROXY_HOPS: '2' };
    },
  });
  const failures: string[] = [];
  try {
    const users = Array.from(
      { length: USERS },
      (_, i) => new ClusterMix(cluster, failures, `198.18.${i >> 8}.${(i & 255) + 1}`),
    );
    console.log(`soak: setting up ${USERS} users`);
    for (const [i, user] of users.entries()) {
      if (i % 10 === 0) await user.setUp();
      else await user.signUp();
    }
    // Warm: a minute's first requests (compilation, pools, caches) are not growth.
    let running = true;
    const think = () => sleep(500 + Math.random() * 1_000);
    const loop = async (move: () => Promise<unknown>) => {
      while (running) {
        await move().catch((error: Error) => failures.push(error.message));
        await think();
      }
    };
    const moves = users.flatMap((user, i) => {
      const light = async () => {
        await user.step('agents list', () => user.listAgents());
        if (Math.random() < 0.01) await user.signIn();
      };
      if (i % 10 !== 0) return [light];
      return [
        light,
        () => user.agentLife(),
        () => user.listAndFirewall(),
        () => user.tokenRead(),
        () => user.publish(),
      ];
    });
    const loops = Promise.all(moves.map(loop));
    await sleep(30_000);
    const warm = timings.length;
    const start = await Promise.all(cluster.processes.map((p) => rssMiB(p.pid)));
    const startedAt = Date.now();
    console.log(`soak: warm after ${warm} requests; running ${MINUTES} min`);
    await sleep(MINUTES * 60_000);
    const end = await Promise.all(cluster.processes.map((p) => rssMiB(p.pid)));
    const measured = timings.slice(warm);
    running = false;
    await loops;
    const seconds = (Date.now() - startedAt) / 1000;

    const byRoute = new Map<string, number[]>();
    for (const { route, ms } of measured) {
      const list = byRoute.get(route) ?? [];
      list.push(ms);
      byRoute.set(route, list);
    }
    console.log(
      `\n${measured.length} requests in ${Math.round(seconds)} s (${(measured.length / seconds).toFixed(1)}/s) from ${USERS} users`,
    );
    console.log('| route | requests | p50 ms | p99 ms |\n|---|---:|---:|---:|');
    for (const [route, list] of [...byRoute].sort((a, b) => b[1].length - a[1].length)) {
      const sorted = [...list].sort((a, b) => a - b);
      console.log(
        `| ${route} | ${list.length} | ${percentile(sorted, 50)} | ${percentile(sorted, 99)} |`,
      );
    }
    const thousands = measured.length / 1000;
    console.log('\n| process | RSS start MiB | RSS end MiB | growth MiB per 1,000 requests |');
    console.log('|---|---:|---:|---:|');
    for (const [i, p] of cluster.processes.entries()) {
      const [a = 0, b = 0] = [start[i], end[i]];
      console.log(
        `| ${p.name} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${((b - a) / thousands).toFixed(2)} |`,
      );
    }
    console.log(`\nerrors: ${failures.length}`);
    for (const failure of [...new Set(failures)].slice(0, 10)) console.log(`  ${failure}`);
    const logged = cluster.logs.filter((line) => !line.startsWith('haproxy'));
    console.log(`lines logged at error: ${logged.length}`);
  } finally {
    await cluster.stop();
    await standIn?.close();
  }
}
