/**
 * Where sign-in sends the user afterwards: `next` when it is a page of this dashboard on this
 * origin, else home. Anything else (another origin, `//host`, a path that leaves `/dashboard/`
 * once resolved, the sign-in pages themselves) is dropped, so a crafted link cannot use the
 * sign-in page to send someone elsewhere. The answer is a router path (below `/dashboard`).
 */
export function returnPath(next: string | null, origin: string): string {
  if (!next) return '/';
  let url: URL;
  try {
    url = new URL(next, origin);
  } catch {
    return '/';
  }
  if (url.origin !== origin || !url.pathname.startsWith('/dashboard/')) return '/';
  const path = url.pathname.slice('/dashboard'.length);
  if (path.startsWith('/sign-')) return '/';
  return `${path}${url.search}`;
}

/**
 * Pages that work signed out (a link from an e-mail may open them in any browser): a 401 there is
 * the page's to explain, never a reason to leave for sign-in.
 */
const SIGNED_OUT_PAGES = [
  '/sign-in',
  '/sign-up',
  '/forgot-password',
  '/reset-password',
  '/verify-email',
  '/invitation',
  '/undo-email-change',
];

/** Whether `pathname` (the browser's, with `/dashboard`) is one of the pages above. */
export function isSignedOutPage(pathname: string): boolean {
  const path = pathname.replace(/\/$/, '');
  return SIGNED_OUT_PAGES.some((page) => path === `/dashboard${page}`);
}

/** The sign-in page's router path, coming back to the page the browser is on. */
export function signInPath(): string {
  const { pathname, search } = window.location;
  const here = `${pathname}${search}`;
  // From home or the sign-in pages there is nothing to come back to.
  if (returnPath(here, window.location.origin) === '/') return '/sign-in';
  return `/sign-in?next=${encodeURIComponent(here)}`;
}
