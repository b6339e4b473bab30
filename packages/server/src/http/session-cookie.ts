import { SESSION_COOKIE } from '@svc/contract';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';

/**
 * Over HTTPS the session cookie is `__Host-` prefixed: browsers then refuse it from any other
 * host, so content on a sibling subdomain (an Agent's site) cannot plant a session of its own.
 */
export const sessionCookieName = (secure: boolean) =>
  secure ? `__Host-${SESSION_COOKIE}` : SESSION_COOKIE;

export const readSessionCookie = (c: Context, secure: boolean) =>
  getCookie(c, sessionCookieName(secure));

export function writeSessionCookie(
  c: Context,
  session: { sessionId: string; expiresAt: Date },
  secure: boolean,
) {
  setCookie(c, sessionCookieName(secure), session.sessionId, {
    httpOnly: true,
    sameSite: 'Lax',
    secure,
    path: '/',
    expires: session.expiresAt,
  });
}

export function clearSessionCookie(c: Context, secure: boolean) {
  deleteCookie(c, sessionCookieName(secure), {
    httpOnly: true,
    sameSite: 'Lax',
    secure,
    path: '/',
  });
}
