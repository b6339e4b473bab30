import { connect, isIP } from 'node:net';
import type { FirewallRule } from '@svc/contract';
import type { PlainVmRow } from '../db/schema.js';
import type { ServerProbe } from '../lifecycle/machine-readiness.js';

/** The port a Plain VM's SSH server listens on, inside (a forward may put it elsewhere outside). */
const SSH_PORT = 22;

/** An identification line is at most 255 bytes; a server may send other lines before it. */
const MAX_GREETING_BYTES = 8 * 1024;

/**
 * One try: whether an SSH server answers at `target`, read as a client would first read it: its
 * identification line (`SSH-2.0-…`, RFC 4253 §4.2) on a fresh TCP connection, before `signal`
 * ends the try. Nothing is sent; the connection is closed once the line is seen.
 */
export function sshAnswers(
  target: { readonly host: string; readonly port: number },
  signal: AbortSignal,
): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: target.host, port: target.port, signal });
    let received = '';
    const done = (answered: boolean) => {
      socket.destroy();
      resolve(answered);
    };
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      const lines = received.split('\n');
      // Only complete lines count: `SSH-2.0-` followed by the software's name.
      if (lines.slice(0, -1).some((line) => /^SSH-(2\.0|1\.99)-/.test(line))) return done(true);
      if (received.length > MAX_GREETING_BYTES) done(false);
    });
    socket.on('error', () => done(false));
    socket.on('close', () => done(false));
  });
}

/**
 * A move's probe of a Plain VM's server: its SSH server where the API reports it (`ssh`). The
 * service tries from an address of its own that the VM's firewall may refuse (rules naming only
 * the user's addresses): only a VM whose firewall admits every address to SSH is tried, since
 * one that refuses the service would never count as answering.
 */
export const sshProbe: ServerProbe = async (server, signal, machine) => {
  if (!server.ssh) return 'no_address';
  const { firewallRules } = machine as PlainVmRow;
  if (!admitsEveryoneToSsh(firewallRules, server.ssh.host)) return 'unprobed';
  return (await sshAnswers(server.ssh, signal)) ? 'answered' : 'silent';
};

/** Whether some inbound TCP rule covers port 22 from every address of `host`'s family. */
function admitsEveryoneToSsh(rules: readonly FirewallRule[], host: string): boolean {
  const everyone = isIP(host) === 6 ? '::/0' : '0.0.0.0/0';
  return rules.some((rule) => {
    const [low, high = low] = rule.port.split('-').map(Number) as [number, number?];
    const coversSsh = low <= SSH_PORT && SSH_PORT <= (high as number);
    return (
      rule.direction === 'in' &&
      rule.protocol === 'tcp' &&
      coversSsh &&
      rule.sourceIps.includes(everyone)
    );
  });
}
