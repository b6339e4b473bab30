import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanUp } from '../../../../test/clean-up.js';
import { createIncusProject, INCUS_SOCKET } from '../../../../test/incus.js';
import { incusExec } from '../../../../test/incus-exec.js';
import { readCliBuild } from '../../../util/cli-build.js';
import { pushCliBuild } from './incus-agent.js';
import { IncusClient } from './incus-client.js';

// A `svc` build the service made itself under its umask 077 (files 0600, directories 0700),
// pushed into an instance of the Agent image on the real daemon: the `agent` user, whom the
// gateway runs as, must read and run it. Its files are named apart from the image's own (a file
// the push overwrites keeps its mode), as a new build's new chunks are.

describe('the svc build in an Incus Agent', { timeout: 180_000 }, () => {
  let project: Awaited<ReturnType<typeof createIncusProject>>;
  let client: IncusClient;
  let build: string;
  const instance = `svc-t-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    project = await createIncusProject();
    client = new IncusClient({ socketPath: INCUS_SOCKET, project: project.name });
    build = await mkdtemp(path.join(tmpdir(), 'svc-incus-build-'));
    await mkdir(path.join(build, 'probe-chunks'));
    await writeFile(path.join(build, 'probe.mjs'), "import './probe-chunks/a.mjs';\n");
    await writeFile(path.join(build, 'probe-chunks', 'a.mjs'), "console.log('svc build read');\n");
    await chmod(path.join(build, 'probe.mjs'), 0o600);
    await chmod(path.join(build, 'probe-chunks', 'a.mjs'), 0o600);
    await chmod(path.join(build, 'probe-chunks'), 0o700);
    // No NIC: the check needs no network.
    await client.call('POST', '/1.0/instances', {
      body: {
        name: instance,
        type: 'container',
        source: { type: 'image', alias: 'svc-agent' },
        devices: { eth0: { type: 'none' } },
      },
    });
    await client.call('PUT', `/1.0/instances/${instance}/state`, { body: { action: 'start' } });
  });
  afterAll(() =>
    cleanUp({
      project: () => project?.remove(),
      client: () => client?.close(),
      build: () => build && rm(build, { recursive: true, force: true }),
    }),
  );

  it('is readable by the agent user, who runs it with the image’s Node', async () => {
    const read = await readCliBuild(build);
    if (!read) throw new Error('no build read');
    await pushCliBuild(client, instance, build, read);
    const modes = await incusExec(
      project.name,
      instance,
      'stat -c "%n %a %U" /opt/svc/probe.mjs /opt/svc/probe-chunks /opt/svc/probe-chunks/a.mjs',
    );
    expect(modes.stdout.trim().split('\n'), modes.stderr).toEqual([
      '/opt/svc/probe.mjs 644 root',
      '/opt/svc/probe-chunks 755 root',
      '/opt/svc/probe-chunks/a.mjs 644 root',
    ]);
    const run = await incusExec(
      project.name,
      instance,
      'su agent -s /bin/sh -c "/opt/svc/bin/node /opt/svc/probe.mjs"',
    );
    expect(run, run.stderr).toMatchObject({ code: 0, stdout: 'svc build read\n' });
  });
});
