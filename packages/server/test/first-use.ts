import { connect } from 'node:net';
import type { Agent, PlainVm } from '@svc/contract';
import { expect } from 'vitest';
import { type LocalResponse, localRequest } from './localhost-http.js';
import type { TestClient } from './test-client.js';

/**
 * Reads the machine at `path` (`/api/agents/<id>`) as fast as the service answers, and returns
 * it the first time it is `running`: what a dashboard polling its status sees, without the
 * slack of a slower poll. An `error` fails at once with its reason.
 */
export async function firstRunning<T extends { status: string; statusReason?: string | null }>(
  client: TestClient,
  path: string,
  withinMs: number,
): Promise<T> {
  const until = Date.now() + withinMs;
  for (;;) {
    const machine = (await client.get(path)).body as T;
    if (machine.status === 'running') return machine;
    expect(machine.status, `${path}: ${machine.statusReason}`).not.toBe('error');
    if (Date.now() > until) throw new Error(`${path} not running within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * The Agent's URL requested the instant it is `running`, through the edge, as a user clicking
 * Open at once would: its gateway answers it (the redirect to open it from the dashboard),
 * never the edge's 502 page.
 */
export async function openAtOnce(client: TestClient, id: string, withinMs: number) {
  const agent = await firstRunning<Agent>(client, `/api/agents/${id}`, withinMs);
  const res: LocalResponse = await localRequest(agent.url, { headers: { accept: 'text/html' } });
  // Whatever the gateway answers a visitor without its cookie, but never the edge's error pages.
  expect(res.status, `${agent.url} at once: ${res.body.slice(0, 200)}`).toBeLessThan(500);
  return agent;
}

/**
 * The Plain VM's SSH server, at the address the API reports, read the instant the VM is first
 * `running`: it sends its banner (`SSH-2.0-…`).
 */
export async function sshAtOnce(client: TestClient, id: string, withinMs: number) {
  const vm = await firstRunning<PlainVm>(client, `/api/plain-vms/${id}`, withinMs);
  expect(vm.ssh, 'the API reports where SSH answers').not.toBeNull();
  const { host, port } = vm.ssh as { host: string; port: number };
  expect(await sshBanner(host, port)).toMatch(/^SSH-2\.0-/);
  return vm;
}

/**
 * The first line an SSH server sends on a new connection (its identification, `SSH-2.0-…`), or
 * what came before the connection failed or went silent for `timeoutMs` (an error message).
 */
export function sshBanner(host: string, port: number, timeoutMs = 3_000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let received = '';
    const done = (line: string) => {
      socket.destroy();
      resolve(line);
    };
    socket.setTimeout(timeoutMs, () => done(`silent: ${JSON.stringify(received)}`));
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      const end = received.indexOf('\n');
      if (end >= 0) done(received.slice(0, end).trimEnd());
    });
    socket.on('error', (err) => done(`failed: ${err.message}`));
    socket.on('close', () => done(`closed: ${JSON.stringify(received)}`));
  });
}
