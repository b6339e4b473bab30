import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCliBuild } from '../../util/cli-build.js';
import { pushCliBuild } from './incus/incus-agent.js';
import type { FileOwner, IncusClient } from './incus/incus-client.js';

// A `svc` build the service made itself, under its umask 077: every file 0600 or 0700, every
// directory 0700. A machine installs it readable by all, since its gateway runs as `agent`.

describe('the svc build, as machines install it', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'svc-cli-build-'));
    await mkdir(path.join(dir, 'chunks'));
    await writeFile(path.join(dir, 'svc.mjs'), 'export {};\n');
    await writeFile(path.join(dir, 'chunks', 'a.mjs'), 'export const a = 1;\n');
    await writeFile(path.join(dir, 'run'), '#!/bin/sh\n');
    await chmod(path.join(dir, 'svc.mjs'), 0o600);
    await chmod(path.join(dir, 'chunks', 'a.mjs'), 0o600);
    await chmod(path.join(dir, 'run'), 0o700);
    await chmod(path.join(dir, 'chunks'), 0o700);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const expected = {
    chunks: 0o755,
    'chunks/a.mjs': 0o644,
    run: 0o755,
    'svc.mjs': 0o644,
  };

  it('gives directories and owner-executable files 0755, the rest 0644', async () => {
    const build = await readCliBuild(dir);
    const modes = Object.fromEntries(build?.files.map((f) => [f.relative, f.mode]) ?? []);
    expect(modes).toEqual(expected);
  });

  it('is pushed into an Incus instance with those modes, root’s', async () => {
    const pushed: Record<string, FileOwner> = {};
    const record = async (_: string, target: string, owner: FileOwner) => {
      pushed[path.posix.relative('/opt/svc', target)] = owner;
    };
    const client = {
      makeDirectory: record,
      pushFile: (instance: string, target: string, _: unknown, owner: FileOwner) =>
        record(instance, target, owner),
    } as unknown as IncusClient;
    const build = await readCliBuild(dir);
    if (!build) throw new Error('no build read');
    await pushCliBuild(client, 'svc-x', dir, build);
    expect(pushed).toEqual(
      Object.fromEntries(
        Object.entries(expected).map(([file, mode]) => [file, { uid: 0, gid: 0, mode }]),
      ),
    );
  });
});
