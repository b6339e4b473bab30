import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanUp } from '../test/clean-up.js';
import { deleteProject, INCUS_SOCKET, requireIncus } from '../test/incus.js';
import { runServiceUntil } from '../test/service-process.js';
import { IncusClient } from './adapters/compute/incus/incus-client.js';

// The real service (`COMPUTE_DRIVER=incus npm start`) on the real daemon, as a new user starts
// it from the README: a project name of their own, then one made by hand the usual way.

const START_TIMEOUT_MS = 120_000;

describe('starting with the incus driver and a project of its own', () => {
  requireIncus();
  const admin = new IncusClient({ socketPath: INCUS_SOCKET, project: 'default' });
  const projects: string[] = [];
  const dirs: string[] = [];
  const fresh = async () => {
    const project = `svc-t-${randomBytes(4).toString('hex')}`;
    projects.push(project);
    const dir = await mkdtemp(path.join(tmpdir(), 'svc-start-incus-'));
    dirs.push(dir);
    const env = { COMPUTE_DRIVER: 'incus', INCUS_SOCKET, INCUS_PROJECT: project, DATA_DIR: dir };
    return { project, env };
  };
  afterAll(() =>
    cleanUp({
      ...Object.fromEntries(projects.map((name) => [name, () => deleteProject(admin, name)])),
      admin: () => admin.close(),
      dirs: () => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))),
    }),
  );

  it(
    'creates a missing INCUS_PROJECT, sharing the images and profiles, says so once and listens',
    async () => {
      const { project, env } = await fresh();
      const run = await runServiceUntil(env);
      expect(run.stdout, run.stderr).toContain('"msg":"listening"');
      const created = run.stdout
        .split('\n')
        .filter((line) => line.includes(`created Incus project ${project}`));
      expect(created).toHaveLength(1);
      const { config } = await admin.call<{ config: Record<string, string> }>(
        'GET',
        `/1.0/projects/${project}`,
      );
      expect(config).toMatchObject({ 'features.images': 'false', 'features.profiles': 'false' });
    },
    START_TIMEOUT_MS,
  );

  it(
    'stops with one line naming the command when the project keeps its own images and profiles',
    async () => {
      const { project, env } = await fresh();
      // What `incus project create <name>` makes.
      await admin.call('POST', '/1.0/projects', {
        body: { name: project, config: { 'features.images': 'true', 'features.profiles': 'true' } },
      });
      const run = await runServiceUntil(env);
      expect(run.code).toBe(1);
      expect(run.stdout).not.toContain('"msg":"listening"');
      expect(run.stderr.trim().split('\n')).toEqual([
        expect.stringContaining(
          `run \`incus project set ${project} features.images=false features.profiles=false\``,
        ),
      ]);
    },
    START_TIMEOUT_MS,
  );
});
