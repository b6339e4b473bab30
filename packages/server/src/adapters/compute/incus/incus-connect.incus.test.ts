import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanUp } from '../../../../test/clean-up.js';
import {
  deleteProject,
  INCUS_SOCKET,
  incusDriverOptions,
  nameOf,
  requireIncus,
} from '../../../../test/incus.js';
import { LogCapture } from '../../../../test/log-capture.js';
import { ComputeUnavailable } from '../compute-driver.js';
import { IncusClient } from './incus-client.js';
import { IncusComputeDriver } from './incus-compute-driver.js';

// The driver's start on the real daemon (`npm run test:incus`): a project it creates, and the
// one-line refusals of what the operator must fix. Every project it makes is deleted at the end.

requireIncus();
const admin = new IncusClient({ socketPath: INCUS_SOCKET, project: 'default' });
const made: string[] = [];
const newName = () => {
  const name = `svc-t-${randomBytes(4).toString('hex')}`;
  made.push(name);
  return name;
};

const driverIn = (project: string, extra: { network?: string; storagePool?: string } = {}) => {
  const logs = new LogCapture();
  const driver = new IncusComputeDriver(
    incusDriverOptions(project, extra),
    pino({ level: 'info' }, logs),
  );
  return { driver, logs };
};

/** Connects and closes; answers the failure, if any. */
const connectFails = async (driver: IncusComputeDriver): Promise<unknown> => {
  try {
    await driver.connect();
    return undefined;
  } catch (error) {
    return error;
  } finally {
    await driver.close();
  }
};

const projectConfig = async (name: string) =>
  (await admin.call<{ config: Record<string, string> }>('GET', `/1.0/projects/${name}`)).config;

describe('the incus driver at start', () => {
  afterAll(() =>
    cleanUp({
      ...Object.fromEntries(made.map((name) => [name, () => deleteProject(admin, name)])),
      admin: () => admin.close(),
    }),
  );

  it("creates a missing project sharing the default project's images and profiles, and says so once", async () => {
    const project = newName();
    const first = driverIn(project);
    await first.driver.connect();
    expect(await projectConfig(project)).toMatchObject({
      'features.images': 'false',
      'features.profiles': 'false',
      'features.networks': 'false',
    });
    // The images of the default project (incus:setup imports debian-12) are bootable from it,
    // and only those.
    const aliases = (await admin.call<string[]>('GET', '/1.0/images/aliases')).map(nameOf);
    expect(aliases).toContain('debian-12');
    const keys = ['debian-12', 'fedora-43', `svc-t-none-${randomBytes(4).toString('hex')}`];
    expect([...(await first.driver.bootableImages(keys))]).toEqual(
      keys.filter((key) => aliases.includes(key)),
    );
    await first.driver.close();
    const created = (logs: LogCapture) =>
      logs.entries().filter((entry) => String(entry.msg).startsWith('created Incus project'));
    expect(created(first.logs)).toEqual([expect.objectContaining({ project, level: 30 })]);

    const again = driverIn(project);
    await again.driver.connect();
    await again.driver.close();
    expect(created(again.logs)).toEqual([]);
  });

  it('refuses, in one line naming the command, a project that keeps its own images and profiles', async () => {
    const project = newName();
    // As `incus project create` makes it.
    await admin.call('POST', '/1.0/projects', {
      body: {
        name: project,
        config: { 'features.images': 'true', 'features.profiles': 'true' },
      },
    });
    const error = await connectFails(driverIn(project).driver);
    expect(error).toBeInstanceOf(ComputeUnavailable);
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    expect(message).toContain(`Incus project ${project} (INCUS_PROJECT) keeps its own`);
    expect(message).toContain(
      `incus project set ${project} features.images=false features.profiles=false`,
    );
  });

  it('refuses, in one line, a bridge or a storage pool that does not exist', async () => {
    const network = await connectFails(driverIn('default', { network: 'svc-no-bridge' }).driver);
    expect(network).toBeInstanceOf(ComputeUnavailable);
    expect((network as Error).message).toMatch(
      /^Incus at unix socket \S+ has no network svc-no-bridge \(INCUS_NETWORK\): `sudo npm run incus:setup` creates incusbr0/,
    );
    const pool = await connectFails(driverIn('default', { storagePool: 'svc-no-pool' }).driver);
    expect(pool).toBeInstanceOf(ComputeUnavailable);
    expect((pool as Error).message).toContain(
      'has no storage pool svc-no-pool (INCUS_STORAGE_POOL)',
    );
  });
});
