import { createPublicKey } from 'node:crypto';
import type { Server } from 'node:http';
import { createServer } from 'node:https';
import { createSecureContext, type SecureContext, type TLSSocket } from 'node:tls';
import { ENV_PUSH_PATH, type EnvPush } from '@svc/contract/agent-env-push';
import { ENROLL_PROOF_PATH, enrollProof } from '@svc/contract/gateway-tls';
import {
  enrollKeyOf,
  enrollSecretOf,
} from '../../src/adapters/compute/hetzner/gateway-exchange.js';
import { GatewayCa } from '../../src/crypto/gateway-ca.js';

/**
 * The loopback address the servers of such tests get: not 127.0.0.1, whose port 8443 may be
 * another program's (an Incus daemon's HTTPS API listens there once a test has enabled it).
 */
export const ENROLLING_GATEWAYS_HOST = '127.0.0.43';

/**
 * Every Hetzner Agent's gateway at one address, for tests whose servers all get this host's
 * loopback address (`pinNextIpv4`): as a real gateway after its first boot, a key of its own and
 * a self-signed certificate; the enrollment proof of the machine the service names (by the TLS
 * server name), with that machine's key derived from `hmacKey`; pushes taken, their certificate
 * served from then on to that name; the health check answered. No client certificate is asked
 * for: what is tested through it is the service's side.
 */
export async function enrollingGateways(
  hmacKey: Buffer,
  host = ENROLLING_GATEWAYS_HOST,
  port = 8443,
): Promise<Server> {
  const own = await GatewayCa.generate();
  const spki = createPublicKey(own.key).export({ type: 'spki', format: 'der' });
  const secret = enrollSecretOf(hmacKey);
  const enrolled = new Map<string, SecureContext>();
  const server = createServer(
    {
      key: own.key,
      cert: own.cert,
      SNICallback: (name, done) => done(null, enrolled.get(name)),
    },
    (req, res) => {
      const name = (req.socket as TLSSocket).servername || '';
      const machineId = name.split('.')[0] ?? '';
      if (req.url === ENROLL_PROOF_PATH) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(
          JSON.stringify({ proof: enrollProof(enrollKeyOf(secret, machineId), spki) }),
        );
      }
      if (req.url === ENV_PUSH_PATH && req.method === 'POST') {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const push = JSON.parse(Buffer.concat(chunks).toString()) as EnvPush;
          if (push.gatewayCert) {
            enrolled.set(name, createSecureContext({ key: own.key, cert: push.gatewayCert }));
          }
          res.writeHead(204).end();
        });
        return;
      }
      res.writeHead(req.url === '/_svc/health' ? 200 : 404, { 'content-type': 'application/json' });
      res.end('{"status":"ok"}');
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return server;
}
