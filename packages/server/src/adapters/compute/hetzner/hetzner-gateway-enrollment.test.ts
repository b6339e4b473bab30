import { createPublicKey, randomUUID, X509Certificate } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ENV_PUSH_PATH, HOME_SEED_PATH } from '@svc/contract/agent-env-push';
import { ENROLL_PROOF_PATH } from '@svc/contract/gateway-tls';
import { describe, expect, it } from 'vitest';
import { readAgentEnv } from '../../../../../cli/src/agent-env.js';
import { hetznerDriverForTests } from '../../../../test/hetzner/driver.js';
import {
  agentSpec,
  enrollingDriver,
  serversOf,
  TEST_HMAC_KEY,
} from '../../../../test/hetzner/enrolling-driver.js';
import { startTestGateway } from '../../../../test/test-gateway.js';
import { issueAgentToken } from '../../../agents/agent-token.js';
import { createEdgeProxy } from '../../../edge/edge-proxy.js';
import { type EdgeRoutes, gatewayTarget } from '../../../edge/edge-routes.js';
import { createGatewayConnector } from '../../../edge/gateway-connection.js';
import { startHttpServer } from '../../../http/http-server.js';
import { createLogger } from '../../../logger.js';
import { gatewayExchange, keyFingerprint } from './gateway-exchange.js';
import { GATEWAY_PIN_LABEL } from './hetzner-gateway-pins.js';

// After enrollment, against the Hetzner stand-in with the real gateway: the gateway forgets its
// enrollment key, the edge keeps the public from the service's own routes, and the service
// talks only to the key it enrolled.

const setup = hetznerDriverForTests();

/** An Agent made and enrolled by the driver, its gateway booted from the server's user data. */
async function enrolledAgent() {
  const id = randomUUID();
  const spec = agentSpec(id, issueAgentToken(TEST_HMAC_KEY, id, 0));
  const enrolling = await enrollingDriver(setup.standIn);
  setup.standIn.pinNextIpv4('127.0.0.1');
  const made = enrolling.driver.createServer(spec);
  const { gateway } = await enrolling.boot(id);
  return { ...enrolling, id, spec, gateway, info: await made };
}

const tlsDir = (home: string) => path.join(home, '.crabglamp/gateway-tls');
const spkiOf = async (home: string) =>
  createPublicKey(await readFile(path.join(tlsDir(home), 'key.pem'))).export({
    type: 'spki',
    format: 'der',
  });

describe('a Hetzner Agent after its enrollment', () => {
  it('forgets its enrollment key, and the service pins the key it enrolled', async () => {
    const agent = await enrolledAgent();
    try {
      const env = await readAgentEnv(agent.gateway.home);
      expect(env.SVC_HMAC_TOKEN).toBe(agent.spec.bootstrapEnv.SVC_HMAC_TOKEN);
      expect(env).not.toHaveProperty('SVC_ENROLL_KEY');
      // Asked by the service itself, the gateway has no proof to give any more.
      const address = { machineId: agent.id, host: '127.0.0.1', port: agent.gatewayPort };
      const asked = await gatewayExchange(
        agent.gatewayCa,
        address,
        { kind: 'machine' },
        { method: 'GET', path: ENROLL_PROOF_PATH, timeoutMs: 5_000 },
      );
      expect(asked.status).toBe(404);
      const [server] = serversOf(setup.standIn, agent.id);
      expect(server?.labels[GATEWAY_PIN_LABEL]).toBe(
        keyFingerprint(await spkiOf(agent.gateway.home)),
      );
      // A retry of the whole create (its answer lost) needs no enrollment key: the pin does.
      await expect(agent.driver.createServer(agent.spec)).resolves.toMatchObject({ id: agent.id });
      await agent.driver.deleteServer(agent.id);
    } finally {
      await agent.gateway.close();
    }
  });

  it('refuses pushes and renewals to another key at its address, even one the CA signed', async () => {
    const agent = await enrolledAgent();
    await agent.gateway.close();
    // Another key at the machine's address, with the CA's certificate for the machine (as a
    // copied or leaked one would be), near its end so the reconciler would renew it.
    const env = { ...agent.spec.bootstrapEnv, SVC_HMAC_TOKEN: 'theirs' };
    const impostor = await startTestGateway(
      env,
      { issued: agent.gatewayCa, machineId: agent.id },
      agent.gatewayPort,
    );
    try {
      const key = createPublicKey(await readFile(path.join(tlsDir(impostor.home), 'key.pem')));
      const ending = await agent.gatewayCa.issueMachineCert(agent.id, key, 5);
      expect(await impostor.tls?.take(ending)).toBeUndefined();
      const fresh = { ...agent.spec.bootstrapEnv, SVC_HMAC_TOKEN: 'fresh' };
      await expect(agent.driver.setBootstrapEnv(agent.id, fresh)).rejects.toThrow(
        /another key than the one enrolled/,
      );
      await agent.driver.reconcile();
      const certFile = path.join(tlsDir(impostor.home), 'cert.pem');
      expect(new X509Certificate(await readFile(certFile)).validTo).toBe(
        new X509Certificate(ending).validTo,
      );
      expect((await readAgentEnv(impostor.home)).SVC_HMAC_TOKEN).toBe('theirs');
      await agent.driver.deleteServer(agent.id);
    } finally {
      await impostor.close();
    }
  });

  it('is reached by the public through the edge, but never at the service’s own routes', async () => {
    const agent = await enrolledAgent();
    const target = gatewayTarget(agent.info);
    if (!target) throw new Error('no gateway');
    const routes = {
      resolve: async () => ({ kind: 'route', agentId: agent.id, target }),
      forget: () => {},
      lookups: 0,
    } as unknown as EdgeRoutes;
    const edge = createEdgeProxy({
      routes,
      gateways: createGatewayConnector(agent.gatewayCa),
      agentOrigin: { domain: 'agents.test' },
      publicUrl: 'https://app.test',
      trust: { trustProxy: false, trustedProxyHops: 1 },
      log: createLogger({ logLevel: 'silent' }),
    });
    const service: Server = startHttpServer(
      { fetch: () => new Response('the app') },
      { port: 0, host: '127.0.0.1' },
      undefined,
      edge,
    );
    await new Promise((resolve) => service.once('listening', resolve));
    const port = (service.address() as AddressInfo).port;
    const send = (method: string, route: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port, method, path: route, headers: { host: 'bot.agents.test' } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(method === 'POST' ? '{}' : undefined);
      });
    try {
      // A gateway that still held its enrollment key would answer the edge's connection (which
      // shows the service's certificate) with a proof.
      const envFile = path.join(agent.gateway.home, '.crabglamp/agent.env');
      await writeFile(envFile, `${await readFile(envFile, 'utf8')}SVC_ENROLL_KEY=still-here\n`);
      expect(await send('GET', '/_svc/health')).toBe(200);
      for (const [method, route] of [
        ['GET', ENROLL_PROOF_PATH],
        ['POST', ENV_PUSH_PATH],
        ['POST', HOME_SEED_PATH],
        ['POST', '/_svc/./agent-env'],
        ['GET', '/x/../_svc/enroll-proof?again=1'],
      ] as const) {
        expect(await send(method, route), `${method} ${route}`).toBe(404);
      }
      await agent.driver.deleteServer(agent.id);
    } finally {
      edge.close();
      service.closeAllConnections();
      await new Promise((resolve) => service.close(resolve));
      await agent.gateway.close();
    }
  });
});
