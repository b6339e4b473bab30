import {
  type Agent,
  completePublish,
  createAgent,
  createPlainVm,
  createStaging,
  DEFAULT_FIREWALL_RULES,
  deleteAgent,
  getAgent,
  getConnectionToken,
  getPlainVm,
  listAgents,
  listAppConnections,
  type MachineState,
  publishBundle,
  putPlainVmFirewall,
  signIn,
  signUp,
  startAgent,
  stopAgent,
} from '@svc/contract';
import { issueAgentToken } from '../src/agents/agent-token.js';
import { connectApp } from './apps-fixture.js';
import { manifestOf, reportOf, sha256, tarballOf } from './bundle-test-helpers.js';
import type { Cluster } from './cluster.js';
import { startStandIn } from './stand-in-provider.js';
import { TestClient } from './test-client.js';
import { TEST_ENV } from './test-context.js';
import { waitFor } from './wait.js';

// The steady mix of the cluster tests and the soak: what a user's browser and an Agent do all
// day, each call through HAProxy, every answer of 500 or more (or a broken connection) recorded.

const PASSWORD = 'cluster test pw 1';
const AGENT_BODY = { name: 'steady', size: 'small', region: 'eu', billingType: 'metered' } as const;
const HMAC_KEY = Buffer.from(TEST_ENV.HMAC_KEY, 'base64');

/**
 * A client of HAProxy's address that records every answer it was not meant to get. `forwardedFor`:
 * the address an outer proxy would say it came from (the soak's users, with TRUSTED_PROXY_HOPS=2,
 * so that per-address limits see a hundred users, not one).
 */
export function recordingClient(base: string, failures: string[], forwardedFor?: string) {
  const http = {
    request: async (p: string, init?: RequestInit) => {
      const started = Date.now();
      const headers = new Headers(init?.headers);
      if (forwardedFor) headers.set('x-forwarded-for', forwardedFor);
      const res = await fetch(`${base}${p}`, { ...init, headers, redirect: 'manual' }).catch(
        (error: Error) => {
          failures.push(`${init?.method ?? 'GET'} ${p}: ${error.message}`);
          throw error;
        },
      );
      if (res.status >= 500) {
        failures.push(`${init?.method ?? 'GET'} ${p}: ${res.status} ${await res.clone().text()}`);
      }
      timings.push({
        route: routeOf(init?.method ?? 'GET', p),
        at: started,
        ms: Date.now() - started,
        status: res.status,
      });
      return res;
    },
  };
  return new TestClient(http as never, base);
}

/** Every request's route (ids folded) and duration, for the soak's percentiles. */
export const timings: { route: string; at: number; ms: number; status: number }[] = [];
const routeOf = (method: string, p: string) =>
  `${method} ${p.split('?')[0]?.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '{id}')}`;

/** A code-host stand-in whose callback is the cluster's: `startCluster`'s `env`. */
export async function appsStandIn(publicUrl: string) {
  const standIn = await startStandIn('code', { redirectUri: `${publicUrl}/api/apps/callback` });
  return standIn;
}

/** The calls of one user and one of their Agents, each counted by kind when it succeeds. */
export class ClusterMix {
  readonly counts: Record<string, number> = {};
  readonly client: TestClient;
  readonly email = `mix-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  vmId = '';
  connectionId = '';
  /** The Agent whose token reads app tokens and publishes bundles. */
  agent?: TestClient;
  /** Each completed publish: its bundle and version (checked against the store after faults). */
  readonly published: { bundleId: string; version: number }[] = [];

  constructor(
    readonly cluster: Cluster,
    readonly failures: string[],
    readonly forwardedFor?: string,
  ) {
    this.client = recordingClient(cluster.url, failures, forwardedFor);
  }

  /** Counts a call that must succeed (`TestClient.call` throws on any other answer). */
  async step<T>(name: string, call: () => Promise<T>): Promise<T> {
    const result = await call();
    this.counts[name] = (this.counts[name] ?? 0) + 1;
    return result;
  }

  agentIn(id: string, state: MachineState, timeoutMs = 120_000) {
    return waitFor(
      async () =>
        ((await this.client.call(getAgent, { params: { id } })).body as Agent).status === state,
      timeoutMs,
      `Agent ${id} ${state}`,
    );
  }

  /** The user, a Plain VM for firewall changes, an Agent with a token and an app connection. */
  async setUp(options: { apps?: boolean } = {}) {
    const { client } = this;
    await this.signUp();
    const vm = await client.call(createPlainVm, {
      body: {
        name: 'steady-vm',
        tier: 'small',
        region: 'eu',
        osImageKey: 'debian-12',
        billingType: 'metered',
        access: { passwordEnabled: true, vaultEntryIds: [] },
      },
    });
    this.vmId = vm.body.id;
    const agent = await client.call(createAgent, { body: { ...AGENT_BODY, name: 'publisher' } });
    await waitFor(
      async () =>
        (await client.call(getPlainVm, { params: { id: this.vmId } })).body.status === 'running',
      120_000,
      'Plain VM running',
    );
    await this.agentIn(agent.body.id, 'running');
    const token = issueAgentToken(HMAC_KEY, agent.body.id, 1);
    this.agent = recordingClient(this.cluster.url, this.failures, this.forwardedFor).withDefaults({
      headers: { authorization: `Bearer ${token}` },
      origin: null,
    });
    if (options.apps !== false) {
      const { callback } = await connectApp(client, 'code');
      if (callback.status !== 200) throw new Error(`the apps callback answered ${callback.status}`);
      const [connection] = (await client.call(listAppConnections)).body;
      if (!connection) throw new Error('no app connection after the callback');
      this.connectionId = connection.id;
    }
  }

  /** The user alone, signed in (the soak's light users). */
  async signUp() {
    await this.client.call(signUp, {
      body: { email: this.email, password: PASSWORD, name: 'Mix' },
    });
  }

  listAgents() {
    return this.client.call(listAgents, {});
  }

  /** One Agent's life, each move waited for: what an operation "completes" means. */
  async agentLife() {
    const { client } = this;
    const { id } = (
      await this.step('agent create', () => client.call(createAgent, { body: AGENT_BODY }))
    ).body;
    await this.agentIn(id, 'running');
    await this.step('agent stop', () => client.call(stopAgent, { params: { id } }));
    await this.agentIn(id, 'stopped');
    await this.step('agent start', () => client.call(startAgent, { params: { id } }));
    await this.agentIn(id, 'running');
    await this.step('agent destroy', () => client.call(deleteAgent, { params: { id } }));
    await waitFor(
      async () => (await client.send(getAgent, { params: { id } })).status === 404,
      120_000,
      `Agent ${id} gone`,
    );
  }

  /** A list of Agents and a firewall PUT: all the default rules and only the first, in turn. */
  async listAndFirewall() {
    await this.step('agents list', () => this.client.call(listAgents, {}));
    const rules =
      (this.counts['firewall put'] ?? 0) % 2
        ? DEFAULT_FIREWALL_RULES
        : DEFAULT_FIREWALL_RULES.slice(0, 1);
    await this.step('firewall put', () =>
      this.client.call(putPlainVmFirewall, {
        params: { id: this.vmId },
        body: { rules: [...rules] },
      }),
    );
  }

  /** A sign-in of a new browser (sign-in is rate-limited per address: callers pace it). */
  async signIn() {
    const browser = recordingClient(this.cluster.url, this.failures, this.forwardedFor);
    await this.step('sign-in', () =>
      browser.call(signIn, { body: { email: this.email, password: PASSWORD } }),
    );
  }

  /** What `svc apps token` does: the connection's access token, on the Agent's token. */
  async tokenRead() {
    const agent = this.#agent();
    const res = await this.step('app-token read', () =>
      agent.call(getConnectionToken, { params: { id: this.connectionId } }),
    );
    if (!res.body.accessToken) throw new Error('an app token read answered no access token');
  }

  /** stage → publish → upload to S3 → complete: a new bundle's first version, on the Agent's token. */
  async publish() {
    const agent = this.#agent();
    const name = `mix-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
    const files = { 'README.md': Buffer.from(`# ${name}\n`), 'a.txt': Buffer.from(name) };
    const tarball = tarballOf(files);
    const report = reportOf(files, tarball);
    const manifest = manifestOf(name);
    const version = await this.step('bundle publish', async () => {
      const staged = await agent.call(createStaging, { body: { manifest, report } });
      const publish = await agent.call(publishBundle, {
        params: { slug: 'new' },
        body: { stagingId: staged.body.id, manifest, files: report.files, tarball: report.tarball },
      });
      const bySha = new Map([tarball, ...Object.values(files)].map((b) => [sha256(b), b]));
      for (const upload of publish.body.uploads) {
        const res = await fetch(upload.url, {
          method: 'PUT',
          headers: upload.headers,
          body: bySha.get(upload.sha256),
        });
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`an upload to the object store answered ${res.status}`);
      }
      const done = await agent.call(completePublish, {
        params: { slug: publish.body.bundleId },
        body: { stagingId: staged.body.id },
      });
      return { bundleId: publish.body.bundleId, version: done.body.version };
    });
    this.published.push(version);
  }

  #agent(): TestClient {
    if (!this.agent) throw new Error('ClusterMix.setUp first');
    return this.agent;
  }
}
