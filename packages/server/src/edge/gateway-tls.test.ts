import { randomUUID } from 'node:crypto';
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../../test/test-gateway.js';
import { GatewayCa } from '../crypto/gateway-ca.js';
import { createGatewayConnector, gatewayAnswers } from './gateway-connection.js';

// The TLS path between the service and a cloud machine's gateway, with the real gateway: what
// it refuses, and what the edge's own connections refuse.

/** The outcome of one GET: the status, or the error's code. */
const outcome = (send: typeof httpGet, url: string, options: object = {}) =>
  new Promise<string>((resolve) => {
    const req = send(url, { ...options, timeout: 5_000 }, (res) => {
      res.resume();
      resolve(String(res.statusCode));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });

describe("a cloud machine's gateway over TLS", () => {
  const machineId = randomUUID();
  let ca: GatewayCa;
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let enrolling: Awaited<ReturnType<typeof startTestGateway>>;
  const connector = () => createGatewayConnector(ca);
  const target = (port: number, id = machineId) => ({
    host: '127.0.0.1',
    port,
    machineId: id,
    tls: true,
  });

  beforeAll(async () => {
    const pem = await GatewayCa.generate();
    ca = new GatewayCa(pem.cert, pem.key);
    await ca.serviceClient();
    const env = { SVC_AGENT_ID: machineId, SVC_HMAC_TOKEN: 'svc1.t' };
    gateway = await startTestGateway(env, { issued: ca, machineId });
    enrolling = await startTestGateway(env, { enrolling: ca.cert });
  });
  afterAll(async () => {
    await gateway?.close();
    await enrolling?.close();
  });

  it("answers the service's client certificate, on the machine's own name", async () => {
    const gateways = connector();
    const signal = AbortSignal.timeout(5_000);
    expect(await gatewayAnswers(gateways, target(gateway.port), signal)).toBe(true);
    gateways.close();
  });

  it('refuses plain HTTP on its port', async () => {
    const answer = await outcome(httpGet, `http://127.0.0.1:${gateway.port}/_svc/health`);
    expect(answer).not.toMatch(/^\d+$/);
  });

  it("refuses a client without the service's certificate, and one with a machine's", async () => {
    const url = `https://127.0.0.1:${gateway.port}/_svc/health`;
    const servername = `${machineId}.gateway.svc.internal`;
    const anonymous = await outcome(httpsGet, url, { ca: ca.cert, servername });
    expect(anonymous).toMatch(/CERTIFICATE_REQUIRED|ECONNRESET/);
    // A machine's certificate, from the same CA: another tenant's root cannot pass for the service.
    const other = await ca.machineCredentials(randomUUID());
    const asMachine = await outcome(httpsGet, url, { ca: ca.cert, servername, ...other });
    expect(asMachine).not.toMatch(/^\d+$/);
    const asService = await outcome(httpsGet, url, {
      ca: ca.cert,
      servername,
      ...(await ca.serviceClient()),
    });
    expect(asService).toBe('200');
  });

  it('the edge refuses a gateway whose certificate names another machine, or is self-signed', async () => {
    const gateways = connector();
    const elsewhere = target(gateway.port, randomUUID());
    expect(await gatewayAnswers(gateways, elsewhere, AbortSignal.timeout(5_000))).toBe(false);
    const error = await outcome(httpsGet, `${gateways.url(elsewhere)}/_svc/health`, {
      agent: gateways.agentFor(elsewhere),
    });
    expect(error).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    const selfSigned = target(enrolling.port);
    expect(await gatewayAnswers(gateways, selfSigned, AbortSignal.timeout(5_000))).toBe(false);
    const unsigned = await outcome(httpsGet, `${gateways.url(selfSigned)}/_svc/health`, {
      agent: gateways.agentFor(selfSigned),
    });
    expect(unsigned).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY/);
    gateways.close();
  });
});
