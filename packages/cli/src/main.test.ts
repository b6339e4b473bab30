import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadAgentCredentials, parseEnvFile } from './agent-env.js';
import { run } from './main.js';

function io(env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: {
      env,
      stdout: { write: (s: string) => out.push(s) },
      stderr: { write: (s: string) => err.push(s) },
    },
    out: () => out.join(''),
    err: () => err.join(''),
  };
}

describe('svc', () => {
  let home = '';
  afterEach(() => rm(home, { recursive: true, force: true }));

  it('lists its commands when run without arguments', async () => {
    const t = io();
    expect(await run([], t.io)).toBe(0);
    expect(t.out()).toMatch(/^Usage: svc/);
    expect(t.out()).toMatch(/where \[options\]\s+Show the service URL/);
    expect(t.out()).toMatch(/gateway \[options\]\s+Serve this Agent's editor and terminal/);
    expect(t.out()).toMatch(/onboard \[options\]\s+Install the svc agent skill/);
  });

  it.each(['gateway', 'onboard', 'where'])('explains %s with --help', async (command) => {
    const t = io();
    expect(await run([command, '--help'], t.io)).toBe(0);
    expect(t.out()).toMatch(new RegExp(`^Usage: svc ${command}`));
  });

  it('fails with a readable message on an unknown command', async () => {
    const t = io();
    expect(await run(['nope'], t.io)).not.toBe(0);
    expect(t.err()).toMatch(/unknown command 'nope'/);
  });

  it('finds its credentials in ~/.crabglamp/agent.env when the environment has none', async () => {
    home = await mkdtemp(path.join(tmpdir(), 'svc-home-'));
    await mkdir(path.join(home, '.crabglamp'));
    await writeFile(
      path.join(home, '.crabglamp/agent.env'),
      '# written by the platform\nSVC_API_URL=http://127.0.0.1:8080\nSVC_AGENT_ID="a1"\nSVC_HMAC_TOKEN=svc1.a1.1.mac\n',
      { mode: 0o600 },
    );
    const t = io({ HOME: home });
    expect(await run(['where'], t.io)).toBe(0);
    expect(t.out()).toBe('service: http://127.0.0.1:8080\nagent:   a1\n');
    expect(t.out()).not.toContain('svc1.a1.1.mac');
    const json = io({ HOME: home });
    expect(await run(['where', '--json'], json.io)).toBe(0);
    expect(JSON.parse(json.out())).toEqual({ service: 'http://127.0.0.1:8080', agentId: 'a1' });
    // The environment wins over the file.
    const fromEnv = await loadAgentCredentials({
      HOME: home,
      SVC_API_URL: 'http://other',
      SVC_HMAC_TOKEN: 'x',
    });
    expect(fromEnv).toEqual({ apiUrl: 'http://other', hmacToken: 'x' });
  });

  it('says how to get credentials when there are none', async () => {
    home = await mkdtemp(path.join(tmpdir(), 'svc-home-'));
    const t = io({ HOME: home });
    expect(await run(['where'], t.io)).toBe(1);
    expect(t.err()).toMatch(/set SVC_API_URL and SVC_HMAC_TOKEN/);
  });

  it('parses env files with comments, quotes and export', () => {
    expect(parseEnvFile('export A=1\n# c\nB=\'two words\'\n\nbad line\nC="x=y"')).toEqual({
      A: '1',
      B: 'two words',
      C: 'x=y',
    });
  });
});
