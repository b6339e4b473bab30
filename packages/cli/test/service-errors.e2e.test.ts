import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createAgent } from '@svc/contract';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { issueAgentToken } from '../../server/src/agents/agent-token.js';
import { createTestContext, signUpUser, type TestContext } from '../../server/test/test-context.js';
import { databaseKinds } from '../../server/test/test-db.js';
import { type CliIo, run } from '../src/main.js';

/** `svc` with this environment (and this way to the service, when given). */
function cli(env: Record<string, string>, fetchImpl?: typeof fetch) {
  return async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = {
      env,
      stdout: { write: (s: string) => out.push(s) },
      stderr: { write: (s: string) => err.push(s) },
      ...(fetchImpl && { fetch: fetchImpl }),
    };
    const code = await run(argv, io);
    return { code, out: out.join(''), err: err.join('') };
  };
}

const homes: string[] = [];
async function newHome(): Promise<string> {
  const home = await mkdtemp(path.join(tmpdir(), 'svc-errors-home-'));
  homes.push(home);
  await writeFile(path.join(home, 'README.md'), '# Errors\n');
  return home;
}
afterAll(() => Promise.all(homes.map((home) => rm(home, { recursive: true, force: true }))));

/** The real app in memory: glamp reaches it through `io.fetch`, as every command does. */
describe.each(databaseKinds)('svc shows the service reason for a refusal on %s', (kind) => {
  let t: TestContext;
  let token: string;
  beforeAll(async () => {
    t = await createTestContext(kind);
    const owner = t.newClient();
    await signUpUser(owner);
    const agent = await owner.call(createAgent, {
      body: { name: 'Errors', size: 'small', region: 'eu', billingType: 'metered' },
    });
    token = issueAgentToken(t.ctx.secrets.hmacKey, agent.body.id, 1);
  });
  afterAll(() => t?.close());

  const svcIn = (home: string) =>
    cli({ HOME: home, SVC_API_URL: 'http://svc.test', SVC_HMAC_TOKEN: token }, (input, init) =>
      Promise.resolve(t.app.request(String(input), init)),
    );

  it('a 409 reaches the error line with its code and its sentence', async () => {
    // Two shells of one Agent: the second stage replaces the first one's staging.
    const [first, second] = [svcIn(await newHome()), svcIn(await newHome())];
    const staged: string[] = [];
    for (const svc of [first, second]) {
      const init = ['--display-name', 'E', '--description', 'd.', '--tags', 'demo'];
      expect((await svc('glamp', 'init', '--name', 'errors', ...init)).code).toBe(0);
      const stage = await svc('glamp', 'stage');
      expect(stage.code).toBe(0);
      // Without a terminal, stage's stderr is its two summary lines and nothing else.
      expect(stage.err).toMatch(/^Scanned 2 files, .*\/s\)\nPacked 2 files, .*\/s\)\n$/);
      staged.push(/Staging (\S+) recorded/.exec(stage.out)?.[1] ?? 'none');
    }
    const refused = await first('glamp', 'confirm');
    expect(refused.code).toBe(1);
    // After the summary lines of the steps done before the service refused:
    expect(refused.err.split('\n').slice(-2)).toEqual([
      'svc: the service answered 409 invalid_state: cannot publish a staging that is cancelled: stage again',
      '',
    ]);
    // The newer staging is the open one.
    expect((await second('glamp', 'status')).out).toContain(`Open staging ${staged[1]} (staged)`);
  });
});

describe('svc names the URL when the service does not answer as itself', () => {
  let close = async () => {};
  afterEach(() => close());

  /** A stand-in for whatever sits in front of the service, answering every request so. */
  async function listen(status: number, contentType: string, body: string): Promise<string> {
    const server = createServer((_req, res) => {
      res.writeHead(status, { 'content-type': contentType }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    close = () => new Promise((resolve) => server.close(() => resolve()));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  const commands = [
    ['glamp', 'status', '/api/glamps/status'],
    ['apps', 'list', '/api/apps'],
  ] as const;

  it.each(commands)("%s %s: a proxy's HTML 502 page, by URL and status", async (a, b, at) => {
    const url = await listen(
      502,
      'text/html',
      '<html><body><h1>502 Bad Gateway</h1></body></html>',
    );
    const home = await newHome();
    const result = await cli({ HOME: home, SVC_API_URL: url, SVC_HMAC_TOKEN: 'svc1.a.1.m' })(a, b);
    expect(result.code).toBe(1);
    expect(result.err).toBe(
      `svc: GET ${url}${at} answered 502 without the service's error body (a proxy or another server in between?)\n`,
    );
  });

  it.each(commands)('%s %s: a success the contract does not describe', async (a, b, at) => {
    const url = await listen(200, 'application/json', '{"hello":"world"}');
    const home = await newHome();
    const result = await cli({ HOME: home, SVC_API_URL: url, SVC_HMAC_TOKEN: 'svc1.a.1.m' })(a, b);
    expect(result.code).toBe(1);
    expect(result.err).toBe(
      `svc: the answer to GET ${url}${at} (200) does not match the service's contract: is SVC_API_URL the service?\n`,
    );
  });

  it.each(commands)('%s %s: an unreachable service, by URL and cause', async (a, b, at) => {
    // A port that was just free and is closed again: nothing listens there.
    const url = await listen(200, 'text/plain', '');
    await close();
    close = async () => {};
    const home = await newHome();
    const result = await cli({ HOME: home, SVC_API_URL: url, SVC_HMAC_TOKEN: 'svc1.a.1.m' })(a, b);
    expect(result.code).toBe(1);
    const port = new URL(url).port;
    expect(result.err).toBe(
      `svc: cannot reach the service at GET ${url}${at}: connect ECONNREFUSED 127.0.0.1:${port}\n`,
    );
  });
});
