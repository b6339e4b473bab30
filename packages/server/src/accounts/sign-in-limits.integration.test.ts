import { signIn as signInEndpoint, signUp as signUpEndpoint } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { createLogger } from '../logger.js';
import { accountsJobs, sweepAccounts } from './accounts.jobs.js';
import { LONGEST_FORGET_MS, SIGN_IN_LIMITS, SIGN_UP_LIMITS } from './sign-in-limits.js';

const PASSWORD = 'correct horse battery';

describe.each(databaseKinds)('sign-in and sign-up limits on %s', (kind) => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestContext(kind);
  });
  afterAll(() => t?.close());

  let n = 0;
  /** An owner with a fresh e-mail address, signed up from an address of its own. */
  const newOwner = async () => {
    n += 1;
    return (await signUpUser(t.newClient(), { email: `owner${n}@example.com` })).user.email;
  };
  const signIn = (address: string, email: string, password: string) =>
    t.newClient(address).send(signInEndpoint, { body: { email, password } });

  it('a storm of wrong passwords from elsewhere does not lock the owner out', async () => {
    const email = await newOwner();
    // Many guesses from many addresses, and a long run from one of them.
    for (let i = 0; i < 30; i++)
      expect((await signIn(`203.0.113.${i}`, email, 'guess')).status).toBe(401);
    for (let i = 0; i < 10; i++) await signIn('203.0.113.200', email, 'guess');
    expect((await signIn('198.51.100.1', email, PASSWORD)).status).toBe(200);
  });

  it('slows one (account, address) down with growing waits; a success ends the streak', async () => {
    const email = await newOwner();
    const { free, baseDelayMs } = SIGN_IN_LIMITS.perAccountAddress;
    const from = '203.0.114.1';
    for (let i = 0; i < free; i++) expect((await signIn(from, email, 'guess')).status).toBe(401);
    // Even the right password waits (the answer must not tell whether it was right).
    const first = await signIn(from, email, PASSWORD);
    expect(first).toMatchObject({ status: 429, body: { error: 'rate_limited' } });
    expect(first.headers.get('retry-after')).toBe(String(baseDelayMs / 1000));

    t.clock.advance(baseDelayMs);
    expect((await signIn(from, email, 'guess')).status).toBe(401);
    const second = await signIn(from, email, PASSWORD);
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe(String((2 * baseDelayMs) / 1000));

    t.clock.advance(2 * baseDelayMs);
    expect((await signIn(from, email, PASSWORD)).status).toBe(200);
    for (let i = 0; i < free; i++) expect((await signIn(from, email, 'guess')).status).toBe(401);
  });

  it('slows one address down across accounts, and no one else', async () => {
    const email = await newOwner();
    const { free } = SIGN_IN_LIMITS.perAddress;
    const from = '203.0.115.1';
    for (let i = 0; i < free; i++) {
      expect((await signIn(from, `nobody${i}@example.com`, 'guess')).status).toBe(401);
    }
    const blocked = await signIn(from, email, PASSWORD);
    expect(blocked).toMatchObject({ status: 429, body: { error: 'rate_limited' } });
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await signIn('203.0.115.2', email, PASSWORD)).status).toBe(200);
  });

  it('counts a parallel burst one by one: no attempt slips past the wait', async () => {
    const email = await newOwner();
    const client = t.newClient('203.0.116.1');
    const statuses = await Promise.all(
      Array.from({ length: 25 }, () =>
        client.send(signInEndpoint, { body: { email, password: 'guess' } }).then((r) => r.status),
      ),
    );
    const { free } = SIGN_IN_LIMITS.perAccountAddress;
    expect(statuses.filter((s) => s === 401)).toHaveLength(free);
    expect(statuses.filter((s) => s === 429)).toHaveLength(25 - free);
  });

  it('forgets a quiet streak', async () => {
    const email = await newOwner();
    const { free, forgetMs } = SIGN_IN_LIMITS.perAccountAddress;
    for (let i = 0; i < free; i++) await signIn('203.0.117.1', email, 'guess');
    expect((await signIn('203.0.117.1', email, 'guess')).status).toBe(429);
    t.clock.advance(forgetMs);
    for (let i = 0; i < free; i++) {
      expect((await signIn('203.0.117.1', email, 'guess')).status).toBe(401);
    }
  });

  it('the hourly sweep drops only counters every policy has forgotten', async () => {
    const email = await newOwner();
    await signIn('203.0.120.1', email, 'guess');
    const keys = async () =>
      (await t.ctx.database.db.selectFrom('rateLimits').select('key').execute()).length;
    const sweep = accountsJobs({
      database: t.ctx.database,
      clock: t.clock,
      emailLinks: t.ctx.emailLinks,
      invitations: t.ctx.invitations,
      log: createLogger({ logLevel: 'silent' }),
    }).find((job) => job.name === sweepAccounts.name);
    const before = await keys();
    await sweep?.run({} as never, {} as never);
    expect(await keys()).toBe(before);
    t.clock.advance(LONGEST_FORGET_MS);
    await sweep?.run({} as never, {} as never);
    expect(await keys()).toBe(0);
  });

  it('limits sign-ups per address', async () => {
    const { free, baseDelayMs } = SIGN_UP_LIMITS.perAddress;
    const signUp = (address: string, i: number) =>
      t.newClient(address).send(signUpEndpoint, {
        body: { email: `signup-${address}-${i}@example.com`, password: PASSWORD, name: 'Sign-up' },
      });
    for (let i = 0; i < free; i++) expect((await signUp('203.0.118.1', i)).status).toBe(201);
    const blocked = await signUp('203.0.118.1', free);
    expect(blocked).toMatchObject({ status: 429, body: { error: 'rate_limited' } });
    expect(blocked.headers.get('retry-after')).toBe(String(baseDelayMs / 1000));
    expect((await signUp('203.0.118.2', 0)).status).toBe(201);
    t.clock.advance(baseDelayMs);
    expect((await signUp('203.0.118.1', free)).status).toBe(201);
  });
});

describe.each(databaseKinds)('limits behind a trusted proxy on %s', (kind) => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestContext(kind, { env: { TRUST_PROXY: 'true' } });
  });
  afterAll(() => t?.close());

  it('charges the address the proxy saw, whatever the client writes into X-Forwarded-For', async () => {
    const { user } = await signUpUser(t.newClient());
    const { free } = SIGN_IN_LIMITS.perAccountAddress;
    // Every request comes through the proxy; the attacker varies the part it writes itself.
    const viaProxy = (i: number, seenByProxy: string, password: string) =>
      t
        .newClient('10.0.0.2')
        .send(
          signInEndpoint,
          { body: { email: user.email, password } },
          { headers: { 'x-forwarded-for': `192.0.2.${i}, ${seenByProxy}` } },
        );
    for (let i = 0; i < free; i++) {
      expect((await viaProxy(i, '203.0.119.1', 'guess')).status).toBe(401);
    }
    expect((await viaProxy(free, '203.0.119.1', PASSWORD)).status).toBe(429);
    expect((await viaProxy(free, '203.0.119.2', PASSWORD)).status).toBe(200);
  });
});
