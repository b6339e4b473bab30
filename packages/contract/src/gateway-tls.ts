import { createHash, createHmac } from 'node:crypto';

/**
 * The TLS path between the service and an Agent's gateway on a cloud machine. The service is the
 * authority: its CA signs each machine's certificate, naming the machine (`gatewayServerName`),
 * and the service's own client certificate (`SERVICE_CLIENT_NAME`). The gateway answers only
 * clients holding the latter; the service talks only to a gateway holding the former.
 *
 * On the machine the files live in `~/.crabglamp/gateway-tls/`: `ca.pem` (the service's CA
 * certificate: its presence is what makes the gateway speak TLS), `key.pem` (the machine's key)
 * and `cert.pem` (its certificate). A cloud server whose disk the service cannot write before it
 * boots starts with a key of its own and a self-signed certificate, and enrolls (below).
 *
 * Lives outside the package's index: it needs `node:crypto`.
 */
export const GATEWAY_TLS_DIR = '.crabglamp/gateway-tls';
export const GATEWAY_TLS_FILES = { ca: 'ca.pem', key: 'key.pem', cert: 'cert.pem' } as const;

const NAME_SUFFIX = 'gateway.svc.internal';

/** The DNS name a machine's gateway certificate carries, and the edge asks for. */
export const gatewayServerName = (machineId: string): string => `${machineId}.${NAME_SUFFIX}`;

/** The name in the service's client certificate: no machine id is a DNS label like it. */
export const SERVICE_CLIENT_NAME = `service.${NAME_SUFFIX}`;

/**
 * Enrollment (Hetzner): the machine's first boot gets, in its cloud-init user data, the CA
 * certificate and a one-time enrollment key (`SVC_ENROLL_KEY`, derived per machine by the
 * service). The gateway makes its own key; asked by the service (over TLS, the service showing
 * its client certificate), it answers `enrollProof` over its certificate's public key. The
 * service compares it with the proof over the key it sees in the handshake: equal, the key is
 * the machine's (a party in between shows another key), and the service signs a certificate for
 * it and pushes it with the Agent's first token. The key grants nothing else: no API access, no
 * push, and the service asks for a proof only while it makes that machine.
 */
export const ENROLL_PROOF_PATH = '/_svc/enroll-proof';
export const ENROLL_KEY_VARIABLE = 'SVC_ENROLL_KEY';

/** The proof that the holder of `enrollKey` serves the public key `spkiDer` (DER SPKI). */
export function enrollProof(enrollKey: string, spkiDer: Buffer): string {
  const fingerprint = createHash('sha256').update(spkiDer).digest();
  return createHmac('sha256', Buffer.from(enrollKey, 'base64url'))
    .update('svc-gateway-enroll-v1\0')
    .update(fingerprint)
    .digest('base64url');
}
