import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { run } from '@svc/cli';
import { listAppConnections, listAppProviders } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AppsTest,
  agentOf,
  connectApp,
  connectionRow,
  createAppsTest,
  expireAccessToken,
  newUser,
} from '../../test/apps-fixture.js';
import { databaseKinds } from '../../test/test-db.js';

/** `svc apps …` on an Agent, talking to the in-memory app with the Agent's HMAC token. */
describe.each(databaseKinds)('svc apps against the service on %s', (kind) => {
  let apps: AppsTest;
  let home: string;
  let env: Record<string, string>;
  let user: Awaited<ReturnType<typeof newUser>>;
  beforeAll(async () => {
    apps = await createAppsTest(kind);
    home = await mkdtemp(path.join(tmpdir(), 'svc-apps-home-'));
    user = await newUser(apps.t);
    const agent = await agentOf(apps.t, user.client, user.accountId);
    env = {
      HOME: home,
      SVC_API_URL: 'http://localhost:8080',
      SVC_HMAC_TOKEN: agent.headers.authorization.replace('Bearer ', ''),
    };
  });
  afterAll(async () => {
    await apps?.close();
    await rm(home, { recursive: true, force: true });
  });

  async function svc(...argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await run(argv, {
      env,
      stdout: { write: (s: string) => out.push(s) },
      stderr: { write: (s: string) => err.push(s) },
      fetch: (input, init) => Promise.resolve(apps.t.app.request(String(input), init)),
    });
    return { code, out: out.join(''), err: err.join('') };
  }

  it('svc apps (or providers): the registry, whether each is configured, env vars and scopes', async () => {
    const res = await svc('apps');
    expect(res.code).toBe(0);
    expect((await svc('apps', 'providers')).out).toBe(res.out);
    expect(res.out).toMatch(/^suite {2}Productivity suite: configured\n.*GOG_ACCESS_TOKEN/m);
    expect(res.out).toMatch(/^code .*: configured\n.*GH_TOKEN/m);
    expect(res.out).toMatch(/^music .*: configured\n.*SPOTIFY_ACCESS_TOKEN/m);
    expect(res.out).toContain('scope drive.file:');
    const json = await svc('apps', '--json');
    expect(JSON.parse(json.out)).toEqual((await user.client.call(listAppProviders)).body);
  });

  it('<provider>: writes apps.env (600) and one profile line; list shows it configured', async () => {
    await connectApp(user.client, 'code', { login: 'octo' });
    await connectApp(user.client, 'music', { login: 'dj' });
    await writeFile(path.join(home, '.bashrc'), '# mine\nalias ll="ls -l"');
    expect(await svc('apps', 'code')).toMatchObject({ code: 0, err: '' });
    expect(await svc('apps', 'music')).toMatchObject({ code: 0 });
    expect((await svc('apps', 'code')).code).toBe(0); // twice: still one profile line
    const file = path.join(home, '.crabglamp/apps.env');
    const text = await readFile(file, 'utf8');
    const [connection] = (await user.client.call(listAppConnections)).body.filter(
      (c: { provider: string }) => c.provider === 'code',
    );
    const row = await connectionRow(apps.t, connection?.id ?? '');
    const token = apps.t.ctx.tokenCipher.open(row.accessToken, {
      connectionId: row.id,
      provider: 'code',
    });
    expect(text).toContain(`export GH_TOKEN='${token}'`);
    expect(text).toContain("export GH_ACCOUNT='octo@example.test'");
    expect(text).toContain("export SPOTIFY_ACCOUNT='dj@example.test'");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const bashrc = await readFile(path.join(home, '.bashrc'), 'utf8');
    expect(bashrc.startsWith('# mine\nalias ll="ls -l"\n')).toBe(true);
    expect(bashrc.match(/crabglamp\/apps\.env/g)).toHaveLength(2); // one line, named twice
    const list = await svc('apps', 'list');
    expect(list.out).toMatch(
      /code\s+octo@example\.test {2}works \(token valid until .*\) {2}set up here/,
    );
    expect(list.out).toMatch(/music\s+dj@example\.test {2}works .* {2}set up here/);
    const json = JSON.parse((await svc('apps', 'list', '--json')).out);
    expect(json).toContainEqual(
      expect.objectContaining({
        provider: 'code',
        account: 'octo@example.test',
        state: 'works',
        isSetUpHere: true,
      }),
    );
  });

  it('refresh <provider>: a new token once the old one is about to expire', async () => {
    const [music] = (await user.client.call(listAppConnections)).body.filter(
      (c: { provider: string }) => c.provider === 'music',
    );
    const before = await readFile(path.join(home, '.crabglamp/apps.env'), 'utf8');
    await expireAccessToken(apps.t, music?.id ?? '');
    expect((await svc('apps', 'refresh', 'music')).code).toBe(0);
    const after = await readFile(path.join(home, '.crabglamp/apps.env'), 'utf8');
    const tokenLine = (text: string) => /SPOTIFY_ACCESS_TOKEN=.*/.exec(text)?.[0];
    expect(tokenLine(after)).not.toBe(tokenLine(before));
  });

  it('readable errors: 503 says retry, 410 says reconnect in the dashboard, none says connect', async () => {
    const [music] = (await user.client.call(listAppConnections)).body.filter(
      (c: { provider: string }) => c.provider === 'music',
    );
    await expireAccessToken(apps.t, music?.id ?? '');
    apps.standIns.music.faults = { status: 503 };
    const unavailable = await svc('apps', 'music');
    expect(unavailable).toMatchObject({ code: 1 });
    expect(unavailable.err).toMatch(/try again in a minute/);
    apps.standIns.music.faults = { error: 'invalid_grant' };
    const dead = await svc('apps', 'refresh', 'music');
    apps.standIns.music.faults = {};
    expect(dead.code).toBe(1);
    expect(dead.err).toMatch(/reconnect it in the dashboard/);
    // The list tells the real state: the connection is broken now, not merely listed.
    expect((await svc('apps', 'list')).out).toMatch(
      /music\s+dj@example\.test {2}it was revoked, expired or deleted: reconnect it in the dashboard/,
    );
    const none = await svc('apps', 'suite');
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/no suite connection .* connect Productivity suite in the dashboard/);
    expect((await svc('apps', 'mail')).err).toMatch(/unknown provider "mail"/);
  });
});
