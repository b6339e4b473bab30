import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { IncusBridgeFirewall } from '../src/adapters/compute/incus/incus-bridge-firewall.js';
import { IncusClient, isNotFound } from '../src/adapters/compute/incus/incus-client.js';
import type { IncusDriverOptions } from '../src/adapters/compute/incus/incus-compute-driver.js';
import { SHARED_PROJECT_CONFIG } from '../src/adapters/compute/incus/incus-connect.js';
import { PROJECT_KEY } from '../src/adapters/compute/incus/incus-instance-spec.js';
import { IncusSshForwards } from '../src/adapters/compute/incus/incus-ssh-forwards.js';
import { cleanUp } from './clean-up.js';
import { createTestContext } from './test-context.js';
import { testEnv } from './test-db.js';

/** The Incus daemon the `*.incus.test.ts` files use. */
export const INCUS_SOCKET = testEnv.INCUS_SOCKET ?? '/var/lib/incus/unix.socket';

/** The copy-on-write pool `npm run incus:setup` makes (the service's default INCUS_STORAGE_POOL). */
export const INCUS_POOL = 'svc';

/**
 * The incus driver's options for a test service in `project` on the real daemon: containers on
 * the default bridge and the test pool, a quarter of the size table, the Agent image and the
 * CLI build of this checkout; `overrides` adds or replaces any of them.
 */
export const incusDriverOptions = (
  project: string,
  overrides: Partial<IncusDriverOptions> = {},
): IncusDriverOptions => ({
  socketPath: INCUS_SOCKET,
  project,
  network: 'incusbr0',
  storagePool: INCUS_POOL,
  sizeFactor: 0.25,
  instanceType: 'container',
  agentImage: 'svc-agent',
  cliBuildDir: path.join(import.meta.dirname, '../../cli/dist'),
  ...overrides,
});

/**
 * `startEdgeServer`'s context on the real daemon: the incus driver the environment names, in
 * `project` (as `COMPUTE_DRIVER=incus npm start` makes it), on PGlite.
 */
export const incusContext = (project: string) => (env: Record<string, string>) =>
  createTestContext('pglite', {
    env: {
      ...env,
      COMPUTE_DRIVER: 'incus',
      INCUS_SOCKET,
      INCUS_PROJECT: project,
      INCUS_SIZE_FACTOR: '0.25',
    },
    overrides: { compute: undefined },
  });

/** These tests need a real daemon: without one they fail, never skip. */
export function requireIncus(): void {
  if (!existsSync(INCUS_SOCKET)) {
    throw new Error(
      `no Incus socket at ${INCUS_SOCKET}: these tests need Incus (npm run incus:setup)`,
    );
  }
}

/** Deletes a project a test made, or meant to make (one that was never made is no failure). */
export const deleteProject = (admin: IncusClient, name: string): Promise<void> =>
  admin.call('DELETE', `/1.0/projects/${name}`).then(
    () => undefined,
    (error: unknown) => {
      if (!isNotFound(error)) throw error;
    },
  );

/** The name at the end of an Incus object URL (`/1.0/instances/svc-…?project=…`). */
export const nameOf = (url: string): string =>
  decodeURIComponent(new URL(url, 'http://incus').pathname.split('/').pop() as string);

/**
 * An Incus project of a test's own, as one service per project requires (its reconciler removes
 * every service machine of the project its database does not know, so two test services in one
 * project would remove each other's). It uses the default project's images, profiles, storage
 * and networks, as the driver makes a missing one. `remove` deletes what is left in it (instances,
 * and their ACLs and SSH forwards on the bridge), then the project: each step even when one
 * before it failed, the failures thrown at the end.
 */
export async function createIncusProject(): Promise<{ name: string; remove(): Promise<void> }> {
  requireIncus();
  const name = `svc-t-${randomBytes(4).toString('hex')}`;
  const admin = new IncusClient({ socketPath: INCUS_SOCKET, project: 'default' });
  await admin.call('POST', '/1.0/projects', { body: { name, config: SHARED_PROJECT_CONFIG } });
  admin.close();
  return {
    name,
    remove: async () => {
      const client = new IncusClient({ socketPath: INCUS_SOCKET, project: name });
      const firewall = new IncusBridgeFirewall(client, 'incusbr0');
      // Under the firewall lock, as the driver does: each stop or delete makes Incus rewrite the
      // bridge's whole ruleset from its database, and one beside another process's ACL change
      // can enforce a ruleset older than that change (seen: a machine of another test reached a
      // host port its ACL closed while this cleanup ran).
      const instance = (url: string) => () =>
        firewall.exclusive(async () => {
          // Stopped first where it runs (one already stopped refuses: no matter).
          await client
            .call('PUT', `/1.0/instances/${nameOf(url)}/state`, {
              body: { action: 'stop', force: true },
            })
            .catch(() => {});
          await client.call('DELETE', `/1.0/instances/${nameOf(url)}`);
        });
      try {
        await cleanUp({
          instances: async () => {
            const urls = await client.call<string[]>('GET', '/1.0/instances');
            await cleanUp(Object.fromEntries(urls.map((url) => [nameOf(url), instance(url)])));
          },
          // The firewalls of its machines live on the shared bridge: detached and deleted too.
          acls: async () => {
            await cleanUp(
              Object.fromEntries(
                (await firewall.matching({ [PROJECT_KEY]: name })).map((acl) => [
                  acl.name,
                  () => firewall.remove(acl.name),
                ]),
              ),
            );
          },
          // So are its Plain VMs' SSH forward entries: with no instance left, all are orphans.
          forwards: () =>
            new IncusSshForwards(
              client,
              firewall,
              {
                network: 'incusbr0',
                project: name,
                publicSsh: { addresses: {}, ports: { first: 1, last: 1 } },
                log: pino({ level: 'silent' }),
              },
              () => false,
            ).repair([]),
          project: () => client.call('DELETE', `/1.0/projects/${name}`),
        });
      } finally {
        client.close();
      }
    },
  };
}
