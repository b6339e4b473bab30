import { escapeHtml } from '../util/escape-html.js';

/**
 * The page the provider's redirect lands on, in the dashboard's popup. It carries no token and
 * no code; its script (a same-origin file, so the service's CSP needs no exception) posts
 * `{type, status, provider}` to the exact dashboard origin and closes the popup.
 */
export const CALLBACK_SCRIPT_PATH = '/api/apps/callback.js';

export const CALLBACK_MESSAGE_TYPE = 'svc:app-connection';

export function callbackPage(input: {
  readonly outcome: 'connected' | 'failed';
  readonly provider?: string;
  readonly dashboardOrigin: string;
}): string {
  const heading =
    input.outcome === 'connected'
      ? 'Connected. You can close this window.'
      : 'The connection failed.';
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>App connection</title></head>
<body data-outcome="${input.outcome}" data-provider="${escapeHtml(input.provider ?? '')}" data-origin="${escapeHtml(input.dashboardOrigin)}">
<p>${heading}</p>
<script src="${CALLBACK_SCRIPT_PATH}"></script>
</body>
</html>
`;
}

/** Served as JavaScript at `CALLBACK_SCRIPT_PATH`; reads everything from the page's data. */
export const CALLBACK_SCRIPT = `(function () {
  var data = document.body.dataset;
  var message = { type: '${CALLBACK_MESSAGE_TYPE}', status: data.outcome, provider: data.provider };
  if (window.opener && data.origin) window.opener.postMessage(message, data.origin);
  window.close();
})();
`;

/** Headers of the callback page: nothing cached, no referrer leaking the query (the code). */
export const CALLBACK_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  // The popup must keep its opener to report back: every page it passes through (our authorize
  // redirect, the provider, this page) must not put it in a browsing context group of its own.
  'cross-origin-opener-policy': 'unsafe-none',
} as const;
