import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';

/**
 * Binds an authorization to the browser that started it (RFC 9700 §4.7): `authorize` sets a
 * random value in a cookie only the callback receives, the state row keeps its SHA-256, and the
 * callback refuses a browser that does not present it. Without this, a user could hand the
 * provider URL to someone else, whose consent would then connect their provider account (and
 * tokens) to the first user's account.
 */
export const APP_BINDING_COOKIE = 'svc_app_binding';

/** Only the callback needs it; no other request carries it. */
const COOKIE_PATH = '/api/apps/callback';

/**
 * Over HTTPS the name is `__Secure-` prefixed, so a page served over plain HTTP cannot set it.
 * (`__Host-` would also refuse one set by a subdomain, but requires `Path=/`.)
 */
export const bindingCookieName = (secure: boolean) =>
  secure ? `__Secure-${APP_BINDING_COOKIE}` : APP_BINDING_COOKIE;

export const hashBinding = (value: string) =>
  createHash('sha256').update(value).digest('base64url');

/** A fresh 256-bit value and the hash to store with the state. */
export function newBrowserBinding() {
  const value = randomBytes(32).toString('base64url');
  return { value, hash: hashBinding(value) };
}

/** Whether the presented cookie value is the one whose hash the state row holds. */
export function isSameBrowser(presented: string | undefined, storedHash: string): boolean {
  if (!presented) return false;
  const expected = Buffer.from(storedHash);
  const actual = Buffer.from(hashBinding(presented));
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

const attributes = (secure: boolean) =>
  ({ httpOnly: true, sameSite: 'Lax', secure, path: COOKIE_PATH }) as const;

/** Lax, because the provider's redirect back is a cross-site top-level GET. */
export function writeBindingCookie(c: Context, value: string, maxAgeMs: number, secure: boolean) {
  setCookie(c, bindingCookieName(secure), value, {
    ...attributes(secure),
    maxAge: Math.floor(maxAgeMs / 1000),
  });
}

export const readBindingCookie = (c: Context, secure: boolean) =>
  getCookie(c, bindingCookieName(secure));

export function clearBindingCookie(c: Context, secure: boolean) {
  deleteCookie(c, bindingCookieName(secure), attributes(secure));
}
