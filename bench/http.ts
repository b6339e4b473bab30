import { randomBytes } from 'node:crypto';
import { hashSessionId } from '../packages/server/src/accounts/sessions.js';
import { useSession } from '../packages/server/src/accounts/sessions.repo.js';
import { sessionUseTimes } from '../packages/server/src/accounts/sessions.service.js';
import { measure, report, withFloor, withServedApp } from './served-app.js';

/**
 * `GET /api/me` (a cookie session: one statement finds the user and their memberships) against
 * its floor (a plain node:http server sending the same statement through the same Kysely and
 * driver) and `GET /healthz` (no database), in the same process, on PGlite (or PostgreSQL with
 * DATABASE_URL). Targets: /api/me ≥ 0.8 × its floor; p99 < 25 ms on PostgreSQL.
 */
export async function run(): Promise<void> {
  await withServedApp({ work: true }, async ({ ctx, base }) => {
    const signUp = await fetch(`${base}/api/auth/sign-up`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        email: `bench-${randomBytes(4).toString('hex')}@example.com`,
        password: 'benchmark password',
        name: 'Bench',
      }),
    });
    const cookie = signUp.headers.getSetCookie()[0]?.split(';')[0] ?? '';
    const idHash = hashSessionId(decodeURIComponent(cookie.slice(cookie.indexOf('=') + 1)));
    const check = await useSession(ctx.database.db, idHash, sessionUseTimes(new Date()));
    if (!check) throw new Error('the floor does not find the session');
    const bare = await measure(`${base}/healthz`);
    let floor = bare;
    await withFloor(
      () => useSession(ctx.database.db, idHash, sessionUseTimes(new Date())),
      async (floorBase) => {
        floor = await measure(`${floorBase}/`);
      },
    );
    const me = await measure(`${base}/api/me`, { cookie });
    report(ctx.config.database.kind, 'GET /api/me (session + memberships)', {
      bare,
      floor,
      endpoint: me,
    });
  });
}
