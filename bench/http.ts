import { randomBytes } from 'node:crypto';
import { CONNECTIONS, DURATION_S, measure, withServedApp } from './served-app.js';

/**
 * `GET /api/me` (cookie session, session and membership queries) against `GET /healthz` (no
 * database) in the same process, on PGlite (or PostgreSQL with DATABASE_URL). Target ratio ≥ 0.5.
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
    const bare = await measure(`${base}/healthz`);
    const me = await measure(`${base}/api/me`, { cookie });
    console.log(
      `database: ${ctx.config.database.kind}, ${CONNECTIONS} connections, ${DURATION_S} s each`,
    );
    console.log(`GET /healthz (bare route)        ${bare.rps.toFixed(0).padStart(7)} req/s`);
    console.log(`GET /api/me  (session + database) ${me.rps.toFixed(0).padStart(7)} req/s`);
    console.log(`ratio /api/me : /healthz = ${(me.rps / bare.rps).toFixed(2)} (target >= 0.50)`);
  });
}
