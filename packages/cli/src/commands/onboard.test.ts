import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../main.js';
import { SKILL_PATH, TOOLS_PATH } from './onboard.js';

describe('svc onboard', () => {
  let home: string;
  const out: string[] = [];
  const onboard = (args: string[] = [], ask?: (q: string) => Promise<string>) =>
    run(['onboard', ...args], {
      // No service to reach: TOOLS.md says the apps could not be read.
      env: { HOME: home, SVC_API_URL: 'http://127.0.0.1:9', SVC_HMAC_TOKEN: 'svc1.x' },
      stdout: { write: (s: string) => out.push(s) },
      stderr: { write: (s: string) => out.push(s) },
      ...(ask && { prompt: ask }),
    });
  const read = (relative: string) => readFile(path.join(home, relative), 'utf8');

  beforeEach(async () => {
    home = await mkdtemp(path.join(tmpdir(), 'svc-onboard-'));
    out.length = 0;
  });
  afterEach(() => rm(home, { recursive: true, force: true }));

  it('installs the skill and TOOLS.md, and a second run leaves the same files', async () => {
    expect(await onboard()).toBe(0);
    const skill = await read(SKILL_PATH);
    const tools = await read(TOOLS_PATH);
    expect(skill).toMatch(/^---\nname: svc\n/);
    expect(skill).toContain('svc apps <provider>');
    expect(skill).toContain('svc glamp confirm');
    expect(tools).toMatch(/^# Tools on this Agent/);
    expect(tools).toContain('Could not read the connected apps');
    expect(out.join('')).toContain(`~/${SKILL_PATH}: created`);
    out.length = 0;
    expect(await onboard()).toBe(0);
    expect(await read(SKILL_PATH)).toBe(skill);
    expect(await read(TOOLS_PATH)).toBe(tools);
    expect(out.join('')).toContain(`~/${TOOLS_PATH}: unchanged`);
  });

  it("keeps a user's edits to TOOLS.md unless they say yes or pass --force", async () => {
    await onboard();
    await writeFile(path.join(home, TOOLS_PATH), '# my own notes\n');
    expect(await onboard()).toBe(0);
    expect(await read(TOOLS_PATH)).toBe('# my own notes\n');
    expect(out.join('')).toContain('kept (your edits');
    const asked: string[] = [];
    await onboard([], async (q) => {
      asked.push(q);
      return 'n';
    });
    expect(asked).toEqual([`~/${TOOLS_PATH} has your edits. Replace it? [y/N] `]);
    expect(await read(TOOLS_PATH)).toBe('# my own notes\n');
    await onboard([], async () => 'y');
    expect(await read(TOOLS_PATH)).toMatch(/^# Tools on this Agent/);
    await writeFile(path.join(home, TOOLS_PATH), '# mine again\n');
    await onboard(['--force']);
    expect(await read(TOOLS_PATH)).toMatch(/^# Tools on this Agent/);
  });

  it('replaces a file it wrote itself when its content changes, without asking', async () => {
    await onboard();
    await writeFile(path.join(home, SKILL_PATH), 'old skill');
    const state = JSON.parse(await read('.crabglamp/onboard.json'));
    const { createHash } = await import('node:crypto');
    state[SKILL_PATH] = createHash('sha256').update('old skill').digest('hex');
    await writeFile(path.join(home, '.crabglamp/onboard.json'), JSON.stringify(state));
    await onboard([], async () => {
      throw new Error('should not ask');
    });
    expect(await read(SKILL_PATH)).toMatch(/^---\nname: svc/);
  });
});
