/**
 * Logs in and consents at an oidc-provider stand-in like a person with a browser would, with a
 * real HTTP client and a cookie jar: authorize URL → interaction (login) → interaction
 * (consent) → the redirect to our callback, whose URL is returned (with `code`, `state`, `iss`).
 */
export async function consentAtStandIn(authorizeUrl: string, login: string): Promise<URL> {
  const jar = new Map<string, string>();
  const send = async (url: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (jar.size > 0) headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const index = pair.indexOf('=');
      jar.set(pair.slice(0, index), pair.slice(index + 1));
    }
    await res.arrayBuffer();
    return res;
  };
  let url = authorizeUrl;
  let res = await send(url);
  for (let step = 0; step < 10; step += 1) {
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location) {
      throw new Error(`stand-in answered ${res.status} at ${new URL(url).pathname}`);
    }
    const next = new URL(location, url);
    if (!next.pathname.startsWith('/interaction/') && !next.pathname.startsWith('/auth')) {
      return next; // our callback
    }
    url = next.toString();
    if (next.pathname.startsWith('/interaction/')) {
      const page = await fetchText(url, jar);
      const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1] ?? 'consent';
      const form =
        prompt === 'login'
          ? new URLSearchParams({ prompt, login, password: 'any' })
          : new URLSearchParams({ prompt });
      res = await send(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      });
    } else res = await send(url);
  }
  throw new Error('too many redirects at the stand-in');
}

async function fetchText(url: string, jar: Map<string, string>) {
  const res = await fetch(url, {
    headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    redirect: 'manual',
  });
  return res.text();
}
