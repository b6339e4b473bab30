import { createOrg, deleteBundle } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentClient, manifestOf, publishSimple } from '../../test/bundle-test-helpers.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';

const BROWSER = { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } };

// A personal account's slug comes from its owner's e-mail and its name is theirs: its public
// page must not tell a stranger that someone has an account.
describe.each(databaseKinds)('the public page of an account on %s', (kind) => {
  let t: TestContext;
  let reader: TestClient;
  beforeAll(async () => {
    t = await createTestContext(kind);
    reader = t.newClient();
  });
  afterAll(() => t?.close());

  const visit = async (slug: string) => {
    const res = await reader.get(`/${slug}`, BROWSER);
    return { status: res.status, body: String(res.body) };
  };

  it('exists for a personal account only while it has published bundles', async () => {
    const owner = t.newClient();
    const name = `Grace Private ${kind}`;
    const { account } = await signUpUser(owner, { name });
    const unknown = await visit(`nobody-${kind}-${Date.now()}`);
    expect(unknown.status).toBe(404);
    // Nothing published: the same page as for an account that does not exist, no name on it.
    const quiet = await visit(account.slug);
    expect(quiet).toEqual(unknown);
    expect(quiet.body).not.toContain(name);

    const agent = await agentClient(t, owner);
    await publishSimple(t, agent, manifestOf('weather'));
    const published = await visit(account.slug);
    expect(published.status).toBe(200);
    expect(published.body).toContain(name);
    expect(published.body).toContain(`href="/${account.slug}/weather"`);

    // Once nothing is published again, the page is gone again.
    expect(
      (await owner.call(deleteBundle, { params: { accountSlug: account.slug, name: 'weather' } }))
        .status,
    ).toBe(204);
    expect(await visit(account.slug)).toEqual(unknown);
  });

  it('exists for an organization, published or not', async () => {
    const owner = t.newClient();
    await signUpUser(owner);
    const slug = `open-org-${kind}`;
    const org = await owner.call(createOrg, { body: { name: 'Open Org', slug } });
    expect(org.status).toBe(201);
    const page = await visit(slug);
    expect(page.status).toBe(200);
    expect(page.body).toContain('Open Org');
  });
});
