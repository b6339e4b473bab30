import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import type { Server } from 'node:http';
import { connect, type DetailedPeerCertificate, type TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { serve } from '@hono/node-server';
import { createAgent, getAgent } from '@svc/contract';
import { gatewayServerName } from '@svc/contract/gateway-tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIncusProject, INCUS_SOCKET, incusContext } from '../../test/incus.js';
import { freePort } from '../../test/service-process.js';
import { signUpUser, type TestContext } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';
import { GATEWAY_CERT_EXPIRES_KEY, pushGatewayTls } from '../adapters/compute/incus/incus-agent.js';
import { IncusClient } from '../adapters/compute/incus/incus-client.js';
import { type Instance, requireName } from '../adapters/compute/incus/incus-instance.js';
import type { GatewayCa } from '../crypto/gateway-ca.js';
import { type EdgeTarget, gatewayTarget } from '../edge/edge-routes.js';
import { createGatewayConnector, gatewayAnswers } from '../edge/gateway-connection.js';

// An Agent on Incus left running into its gateway certificate's last days gets a new one from
// the driver's reconcile pass (what the Plain VM reconciler job runs every few minutes), and the
// edge, handshaking afresh, still reaches it (`npm run test:incus`).

const DAY_MS = 86_400_000;
const run = promisify(execFile);

describe('Agent gateway certificates on Incus', { timeout: 240_000 }, () => {
  let project: Awaited<ReturnType<typeof createIncusProject>>;
  let t: TestContext;
  let incus: IncusClient;
  let listener: Server | undefined;

  beforeAll(async () => {
    project = await createIncusProject();
    incus = new IncusClient({ socketPath: INCUS_SOCKET, project: project.name });
    // On every address, so the Agent's `svc` reaches the service at the host's bridge address.
    const port = await freePort();
    listener = serve({
      fetch: (request) => t.app.fetch(request),
      port,
      hostname: '0.0.0.0',
    }) as Server;
    t = await incusContext(project.name)({ PUBLIC_URL: `http://localhost:${port}` });
  }, 120_000);

  afterAll(async () => {
    listener?.close();
    await t?.close();
    incus?.close();
    await project?.remove();
  });

  /** When the certificate the gateway serves ends, seen in a new handshake made as the edge's. */
  const servedUntil = (ca: GatewayCa, target: EdgeTarget) =>
    new Promise<number>((resolve, reject) => {
      const socket = connect({
        host: target.host,
        port: target.port,
        ca: ca.cert,
        ...ca.clientCredentials(),
        servername: gatewayServerName(target.machineId),
        minVersion: 'TLSv1.3',
        // Verified below, as strictly, but with the refused chain still readable for the report.
        rejectUnauthorized: false,
      });
      const fail = (err: Error, shown: string) => {
        // When, and what the failed handshake itself was shown, before anything else is asked.
        const failed = `at ${new Date().toISOString()}, shown ${shown}`;
        void holdersOf(target).then((holders) =>
          reject(
            new Error(`handshake with ${target.host} ${failed}: ${err.message} (${holders})`, {
              cause: err,
            }),
          ),
        );
      };
      socket.once('secureConnect', () => {
        if (socket.authorized) resolve(Date.parse(socket.getPeerCertificate().valid_to));
        else fail(new Error(String(socket.authorizationError)), shownChain(socket));
        socket.end();
      });
      socket.once('error', (err) => fail(err, 'no certificate'));
    });

  /**
   * Who had the address when a handshake failed: every instance (of any project) pinned to it,
   * where this Agent's instance (and its MAC) is now, the host's neighbour entry, and the chain a
   * handshake without verification sees right after, with this service's CA's fingerprint. Seen
   * so far (SELF_SIGNED_CERT_IN_CHAIN, which a gateway of another service's CA gives, and
   * ECONNRESET, while other tests made machines): only this Agent pinned there, running, and
   * right after its own certificate from this service's CA. The cause, caught on the bridge: each
   * change of the bridge's `security.acls` (any service's machine made or deleted) has Incus
   * flush and re-add the bridge's address, and a connection opened in those ~12 ms leaves by the
   * host's default route from its eth0 address (an ECONNRESET was its next packet, back on the
   * bridge from that address, refused by the Agent). Not fixed yet: the test fails when it happens.
   */
  const holdersOf = async (target: EdgeTarget): Promise<string> => {
    try {
      const instances = await incus.call<(Instance & { project?: string })[]>(
        'GET',
        '/1.0/instances',
        {
          query: { recursion: '1', 'all-projects': 'true' },
        },
      );
      const pinned = instances
        .filter((each) => each.devices?.eth0?.['ipv4.address'] === target.host)
        .map((each) => `${each.project}/${each.name} ${each.status}`);
      const own = instances.find(
        (each) => each.config?.['user.svc.machine-id'] === target.machineId,
      );
      const neighbour = (await run('ip', ['neigh', 'show', target.host])).stdout.trim();
      return `pinned there: ${pinned.join(', ') || 'none'}; this Agent's instance: ${
        own
          ? `${own.status} at ${own.devices?.eth0?.['ipv4.address']} with MAC ${
              own.devices?.eth0?.hwaddr ?? own.config?.['volatile.eth0.hwaddr']
            }`
          : 'gone'
      }; neighbour: ${neighbour || 'none'}; chain now: ${await chainOf(target)}; this CA: ${
        new X509Certificate(t.ctx.secrets.gatewayCa?.cert ?? '').fingerprint256
      }`;
    } catch (error) {
      return `holders not read: ${(error as Error).message}`;
    }
  };

  /** The certificates `socket`'s peer showed, leaf first (subject, issuer, fingerprint). */
  const shownChain = (socket: TLSSocket) => {
    const seen: string[] = [];
    let cert: DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
    while (cert?.raw && seen.length < 4) {
      seen.push(`${cert.subject?.CN} by ${cert.issuer?.CN} ${cert.fingerprint256}`);
      if (cert.issuerCertificate === cert) break;
      cert = cert.issuerCertificate;
    }
    return seen.join(' <- ') || 'none';
  };

  /** The certificates a gateway shows, leaf first (subject, issuer, fingerprint), unverified. */
  const chainOf = (target: EdgeTarget) =>
    new Promise<string>((resolve) => {
      const ca = t.ctx.secrets.gatewayCa as GatewayCa;
      const probe = connect({
        host: target.host,
        port: target.port,
        ...ca.clientCredentials(),
        servername: gatewayServerName(target.machineId),
        rejectUnauthorized: false,
        minVersion: 'TLSv1.3',
      });
      probe.once('secureConnect', () => {
        const seen = shownChain(probe);
        probe.end();
        resolve(seen);
      });
      probe.once('error', (error) => resolve(`not read (${error.message})`));
    });

  /** The driver's reconcile pass, as the Plain VM reconciler job runs it. */
  const reconcile = () => {
    if (!t.ctx.compute.reconcile) throw new Error('the incus driver has no reconcile pass');
    return t.ctx.compute.reconcile();
  };

  /** Whether the edge's connector, with no connection kept from before, reaches the gateway. */
  const edgeReaches = async (ca: GatewayCa, target: EdgeTarget) => {
    const connector = createGatewayConnector(ca);
    try {
      return await gatewayAnswers(connector, target, AbortSignal.timeout(10_000));
    } finally {
      connector.close();
    }
  };

  it('renews a running Agent certificate in its last days in the reconcile pass', async () => {
    const owner = t.newClient();
    await signUpUser(owner);
    const res = await owner.call(createAgent, {
      body: { name: 'long runner', size: 'small', region: 'eu', billingType: 'metered' },
    });
    const id = res.body.id;
    const agent = await waitFor(
      async () => {
        const current = (await owner.call(getAgent, { params: { id } })).body;
        return ['running', 'error'].includes(current.status) && current;
      },
      120_000,
      `Agent ${id} running`,
    );
    expect(agent.status, `status reason: ${agent.statusReason}`).toBe('running');
    const target = gatewayTarget(await t.ctx.compute.getServer(id));
    if (!target?.tls) throw new Error(`no TLS gateway for ${id}`);
    const ca = t.ctx.secrets.gatewayCa as GatewayCa;
    await waitFor(() => edgeReaches(ca, target), 60_000, `gateway of ${id}`);

    // A pass while the certificate is far from its end leaves it as it is.
    const first = await servedUntil(ca, target);
    await reconcile();
    expect(await servedUntil(ca, target)).toBe(first);

    // A certificate of 5 days, pushed as the driver pushes one (which keeps its end).
    const name = requireName(id);
    const ending = (await pushGatewayTls(incus, name, ca, id, 5)).getTime();
    await incus.call('PATCH', `/1.0/instances/${name}`, {
      body: { config: { [GATEWAY_CERT_EXPIRES_KEY]: new Date(ending).toISOString() } },
    });
    await waitFor(
      async () => (await servedUntil(ca, target)) === ending,
      30_000,
      'the short certificate served',
    );

    // Now within its last days: the pass renews it.
    await reconcile();
    await waitFor(
      async () => (await servedUntil(ca, target)) > Date.now() + 20 * DAY_MS,
      30_000,
      'a renewed certificate served',
    );
    expect(await edgeReaches(ca, target)).toBe(true);
    const config = (
      await incus.call<{ config: Record<string, string> }>('GET', `/1.0/instances/${name}`)
    ).config;
    expect(Date.parse(config[GATEWAY_CERT_EXPIRES_KEY] ?? '')).toBeGreaterThan(
      ending + 20 * DAY_MS,
    );
  });
});
