import { SESSION_COOKIE } from '@svc/contract';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';

export const readSessionCookie = (c: Context) => getCookie(c, SESSION_COOKIE);

export function writeSessionCookie(
  c: Context,
  session: { sessionId: string; expiresAt: Date },
  secure: boolean,
) {
  setCookie(c, SESSION_COOKIE, session.sessionId, {
    httpOnly: true,
    sameSite: 'Lax',
    secure,
    path: '/',
    expires: session.expiresAt,
  });
}

export function clearSessionCookie(c: Context, secure: boolean) {
  deleteCookie(c, SESSION_COOKIE, { httpOnly: true, sameSite: 'Lax', secure, path: '/' });
}
