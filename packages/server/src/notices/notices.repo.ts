import type { NoticeKind } from '@svc/contract';
import type { Executor } from '../db/database.js';

/** The kinds the user set (on or off); a kind without a row is on. */
export const preferencesOf = (db: Executor, userId: string) =>
  db
    .selectFrom('noticePreferences')
    .select(['kind', 'enabled'])
    .where('userId', '=', userId)
    .execute();

export async function setPreferences(
  db: Executor,
  userId: string,
  choices: readonly { kind: NoticeKind; enabled: boolean }[],
): Promise<void> {
  if (choices.length === 0) return;
  await db
    .insertInto('noticePreferences')
    .values(choices.map((choice) => ({ userId, ...choice })))
    .onConflict((oc) =>
      oc.columns(['userId', 'kind']).doUpdateSet((eb) => ({ enabled: eb.ref('excluded.enabled') })),
    )
    .execute();
}

/** Records the event as mailed; false if it already was (a retried job). */
export async function claimEvent(
  tx: Executor,
  event: { id: string; kind: NoticeKind; accountId: string },
): Promise<boolean> {
  const row = await tx
    .insertInto('noticeEvents')
    .values(event)
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Takes the subject's turn for a kind sent at most once per period: true (and `at` recorded) when
 * none was queued after `cutoff`. The row's lock serializes two callers at once: one wins.
 */
export async function takeTurn(
  tx: Executor,
  turn: { kind: NoticeKind; subjectId: string; at: Date; cutoff: Date },
): Promise<boolean> {
  const row = await tx
    .insertInto('noticeThrottles')
    .values({ kind: turn.kind, subjectId: turn.subjectId, lastAt: turn.at })
    .onConflict((oc) =>
      oc
        .columns(['kind', 'subjectId'])
        .doUpdateSet({ lastAt: turn.at })
        .where('noticeThrottles.lastAt', '<=', turn.cutoff),
    )
    .returning('lastAt')
    .executeTakeFirst();
  return row !== undefined;
}

/** The account's owners and admins who have not turned `kind` off. */
export const recipientsOf = (db: Executor, accountId: string, kind: NoticeKind) =>
  db
    .selectFrom('accountMembers as m')
    .innerJoin('users as u', 'u.id', 'm.userId')
    .select(['u.email', 'u.name'])
    .where('m.accountId', '=', accountId)
    .where('m.role', 'in', ['owner', 'admin'])
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('noticePreferences as p')
            .select('p.userId')
            .whereRef('p.userId', '=', 'u.id')
            .where('p.kind', '=', kind)
            .where('p.enabled', '=', false),
        ),
      ),
    )
    .orderBy('u.email')
    .execute();

export const accountOf = (db: Executor, accountId: string) =>
  db.selectFrom('accounts').select(['slug', 'name']).where('id', '=', accountId).executeTakeFirst();

/** The names a notice shows; undefined when the subject is gone (deleted since). */
export const machineNameOf = (db: Executor, table: 'agents' | 'plainVms', id: string) =>
  db.selectFrom(table).select('name').where('id', '=', id).executeTakeFirst();

export const connectionOf = (db: Executor, id: string) =>
  db
    .selectFrom('appConnections')
    .select(['provider', 'providerAccountName'])
    .where('id', '=', id)
    .executeTakeFirst();
