import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { countSshSessions } from './ssh-activity.js';

describe('countSshSessions', () => {
  const dirs: string[] = [];
  afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  /** A `/proc` with these processes' command lines (NUL-separated, as the kernel writes them). */
  const proc = async (cmdlines: Record<string, string>) => {
    const dir = await mkdtemp(path.join(tmpdir(), 'svc-proc-'));
    dirs.push(dir);
    for (const [pid, cmdline] of Object.entries(cmdlines)) {
      await mkdir(path.join(dir, pid));
      await writeFile(path.join(dir, pid, 'cmdline'), cmdline.split(' ').join('\0'));
    }
    await mkdir(path.join(dir, 'sys'));
    return dir;
  };

  it('counts signed-in sessions, with or without a terminal, and nothing else', async () => {
    const dir = await proc({
      '1': '/sbin/init',
      '310': 'sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups',
      '402': 'sshd: debian [priv]',
      '405': 'sshd: debian@pts/0',
      '410': '-bash',
      '502': 'sshd-session: ann@notty',
      '601': 'sshd: unknown [preauth]',
      '602': 'sshd: debian [net]',
      '700': 'node /usr/local/bin/svc gateway sshd: x@pts/1',
    });
    expect(await countSshSessions(dir)).toBe(2);
  });

  it('finds none on a machine without sessions', async () => {
    expect(await countSshSessions(await proc({ '1': '/sbin/init', '7': 'sleep 60' }))).toBe(0);
  });
});
