import { createStaging, getGlampStatus } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentClient,
  agentClient,
  manifestOf,
  reportOf,
} from '../../test/bundle-test-helpers.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';

const CONCURRENT = 6;

describe.each(databaseKinds)('Concurrent stagings on %s', (kind) => {
  let t: TestContext;
  let agent: AgentClient;
  beforeAll(async () => {
    t = await createTestContext(kind);
    const owner = t.newClient();
    await signUpUser(owner);
    agent = await agentClient(t, owner);
  });
  afterAll(() => t?.close());

  const stage = (i: number) => {
    const files = { 'README.md': Buffer.from(`# Staging ${i}\n`) };
    return agent.send(createStaging, {
      body: { manifest: manifestOf(`staged-${i}`), report: reportOf(files) },
    });
  };

  const openStagings = async () =>
    t.ctx.database.db
      .selectFrom('bundleStagings')
      .select(['id', 'state'])
      .where('agentId', '=', agent.agentId)
      .where('state', 'in', ['staged', 'publishing'])
      .execute();

  it('each of several stages at once replaces the one before it, and one stays open', async () => {
    // An open staging first, so every request has one to replace.
    expect((await stage(0)).status).toBe(201);
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        Array.from({ length: CONCURRENT }, (_, i) => stage(round * CONCURRENT + i + 1)),
      );
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 201));
      const open = await openStagings();
      expect(open).toHaveLength(1);
      // The open one is the last to commit, and the Agent's status names it.
      const status = await agent.call(getGlampStatus, {});
      expect(status.body.staging?.id).toBe(open[0]?.id);
      const ids = answers.map((a) => (a.body as { id: string }).id);
      expect(ids).toContain(open[0]?.id);
    }
  });
});
