import { describe, expect, it } from 'vitest';
import { isSignedOutPage, returnPath } from './return-to.js';

const ORIGIN = 'https://svc.example';

describe('returnPath', () => {
  it('takes a page of the dashboard, with its query, as a router path', () => {
    expect(returnPath('/dashboard/adopt/acme/helper?version=2', ORIGIN)).toBe(
      '/adopt/acme/helper?version=2',
    );
    expect(returnPath(`${ORIGIN}/dashboard/accounts/acme/agents`, ORIGIN)).toBe(
      '/accounts/acme/agents',
    );
  });

  it('sends anything else home', () => {
    for (const next of [
      null,
      '',
      'https://evil.example/dashboard/adopt/a/b',
      '//evil.example/dashboard/adopt/a/b',
      '/\\evil.example/dashboard/x',
      '/dashboard/../api/agents',
      '/dashboard',
      '/explore',
      'javascript:alert(1)',
      '/dashboard/sign-in?next=/dashboard/x',
      '/dashboard/sign-up',
    ]) {
      expect(returnPath(next, ORIGIN), String(next)).toBe('/');
    }
  });
});

describe('isSignedOutPage', () => {
  it('names the pages a mailed link opens in any browser, and the sign-in pages', () => {
    for (const path of [
      '/dashboard/sign-in',
      '/dashboard/invitation',
      '/dashboard/reset-password',
    ]) {
      expect(isSignedOutPage(path), path).toBe(true);
    }
    for (const path of [
      '/dashboard/',
      '/dashboard/settings',
      '/dashboard/invitation/x',
      '/sign-in',
    ]) {
      expect(isSignedOutPage(path), path).toBe(false);
    }
  });
});
