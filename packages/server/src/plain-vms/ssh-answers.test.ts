import { createServer, type Server } from 'node:net';
import { DEFAULT_FIREWALL_RULES, type FirewallRule } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerInfo } from '../adapters/compute/compute-driver.js';
import type { MachineColumns } from '../lifecycle/machine.repo.js';
import { sshProbe } from './ssh-answers.js';

/** A TCP server on loopback that counts connections and greets each with `greeting`, if any. */
async function listener(greeting?: string) {
  const seen = { connections: 0 };
  const server: Server = createServer((socket) => {
    seen.connections += 1;
    socket.on('error', () => {});
    if (greeting !== undefined) socket.write(greeting);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { server, port, seen };
}

const serverAt = (port: number): ServerInfo => ({
  id: 'vm',
  status: 'running',
  labels: {},
  ssh: { host: '127.0.0.1', port },
});
const vm = (firewallRules: readonly FirewallRule[]) =>
  ({ firewallRules }) as unknown as MachineColumns;
const within = (ms: number) => AbortSignal.timeout(ms);

describe("a Plain VM's readiness probe: its SSH server's banner", () => {
  const servers: Server[] = [];
  let sshd: Awaited<ReturnType<typeof listener>>;
  let mute: Awaited<ReturnType<typeof listener>>;
  let web: Awaited<ReturnType<typeof listener>>;
  beforeAll(async () => {
    sshd = await listener('a line before the banner\r\nSSH-2.0-OpenSSH_9.2p1 Debian\r\n');
    mute = await listener();
    web = await listener('HTTP/1.1 400 Bad Request\r\n\r\n');
    servers.push(sshd.server, mute.server, web.server);
  });
  afterAll(() => {
    for (const server of servers) server.close();
  });

  it('answers once an SSH-2.0 identification line arrives', async () => {
    const open = vm(DEFAULT_FIREWALL_RULES);
    expect(await sshProbe(serverAt(sshd.port), within(2_000), open)).toBe('answered');
  });

  it('is silent while nothing, or something else than SSH, answers', async () => {
    const open = vm(DEFAULT_FIREWALL_RULES);
    expect(await sshProbe(serverAt(mute.port), within(300), open)).toBe('silent');
    expect(await sshProbe(serverAt(web.port), within(300), open)).toBe('silent');
    const closed = await listener();
    closed.server.close();
    expect(await sshProbe(serverAt(closed.port), within(2_000), open)).toBe('silent');
    expect(await sshProbe({ ...serverAt(0), ssh: undefined }, within(300), open)).toBe(
      'no_address',
    );
  });

  it('does not try a VM whose firewall does not admit every address to SSH', async () => {
    const before = sshd.seen.connections;
    const mine: FirewallRule[] = [
      {
        direction: 'in',
        protocol: 'tcp',
        port: '22',
        sourceIps: ['198.51.100.7/32'],
        description: 'mine',
      },
    ];
    expect(await sshProbe(serverAt(sshd.port), within(2_000), vm(mine))).toBe('unprobed');
    expect(await sshProbe(serverAt(sshd.port), within(2_000), vm([]))).toBe('unprobed');
    expect(sshd.seen.connections).toBe(before);
    const range: FirewallRule[] = [
      {
        direction: 'in',
        protocol: 'tcp',
        port: '1-1024',
        sourceIps: ['0.0.0.0/0'],
        description: 'low ports',
      },
    ];
    expect(await sshProbe(serverAt(sshd.port), within(2_000), vm(range))).toBe('answered');
  });
});
