import type { AuditEvent, AuditLog } from '@svc/contract';
import { createApiToken, listAuditEvents } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import type { AnyKysely } from '../db/migrate.js';
import * as actorMigration from '../db/migrations/0019-audit-actor.js';

describe.each(databaseKinds)("the audit log's actors on %s", (kind) => {
  let t: TestContext;
  let owner: TestClient;
  let user: { id: string; email: string };
  let accountId: string;
  const NAME = 'Ada Lovelace';

  beforeAll(async () => {
    t = await createTestContext(kind);
    owner = t.newClient();
    ({
      user,
      account: { id: accountId },
    } = await signUpUser(owner, { name: NAME }));
  });
  afterAll(() => t?.close());

  const events = async (action: string) => {
    const res = await owner.call(listAuditEvents, {
      params: { id: accountId },
      query: { kind: action },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body as AuditLog).items;
  };
  const actorOf = (event: AuditEvent | undefined) => event?.actor;
  /** The user's address and name changed behind the log's back, as any later change would. */
  const rename = (fields: { email: string; name: string }) =>
    t.ctx.database.db.updateTable('users').set(fields).where('id', '=', user.id).execute();

  it('names an actor as they were when the event was written, after a rename', async () => {
    const first = await owner.call(createApiToken, { body: { name: 'before', scope: 'read' } });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const renamed = { email: `renamed-${kind}@example.com`, name: 'Augusta King' };
    await rename(renamed);
    const second = await owner.call(createApiToken, { body: { name: 'after', scope: 'read' } });
    expect(second.status, JSON.stringify(second.body)).toBe(201);

    const [after, before] = await events('token.create');
    expect(before?.data).toMatchObject({ name: 'before' });
    expect(actorOf(before)).toEqual({ userId: user.id, email: user.email, name: NAME });
    expect(after?.data).toMatchObject({ name: 'after' });
    expect(actorOf(after)).toEqual({ userId: user.id, ...renamed });
    // The filter by actor still finds both: it goes by the user, not by the name.
    const mine = await owner.call(listAuditEvents, {
      params: { id: accountId },
      query: { actor: user.id },
    });
    expect(mine.body.items.length).toBeGreaterThanOrEqual(2);
  });

  it('fills in the events written before the columns existed from the user as they are', async () => {
    // The migration's own view: snake_case, no schema.
    const db: AnyKysely = t.ctx.database.db.withoutPlugins();
    await actorMigration.down(db);
    const id = crypto.randomUUID();
    await db
      .insertInto('audit_events')
      .values({
        id,
        account_id: accountId,
        actor_user_id: user.id,
        action: 'token.revoke',
        resource_kind: 'token',
        resource_id: crypto.randomUUID(),
        data: '{}',
        created_at: new Date(),
      })
      .execute();
    await actorMigration.up(db);
    const current = await t.ctx.database.db
      .selectFrom('users')
      .select(['email', 'name'])
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    const [old] = (await events('token.revoke')).filter((e) => e.id === id);
    expect(actorOf(old)).toEqual({ userId: user.id, ...current });
  });
});
