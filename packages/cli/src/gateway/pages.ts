import { GATEWAY_PREFIX } from '@svc/contract/gateway-ticket';

const STYLE = `
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  body { margin: 0; height: 100vh; display: flex; flex-direction: column; }
  header { display: flex; gap: 1rem; align-items: center; padding: .5rem 1rem; border-bottom: 1px solid #8884; }
  header a { color: inherit; }
  main { flex: 1; min-height: 0; display: flex; }
  #terminal { flex: 1; padding: 4px; background: #000; }
  #tree { width: 16rem; overflow: auto; border-right: 1px solid #8884; padding: .5rem; font-size: .9rem; }
  #tree button { all: unset; cursor: pointer; display: block; padding: 1px 0; }
  #tree button:focus-visible { outline: 2px solid Highlight; }
  #pane { flex: 1; min-width: 0; display: flex; flex-direction: column; }
  #bar { display: flex; gap: .5rem; align-items: center; padding: .25rem .5rem; border-bottom: 1px solid #8884; }
  #editor { flex: 1; min-height: 0; overflow: auto; }
  .cm-editor { height: 100%; }
`;

/** What every page says about whose gateway it is. */
export interface PageContext {
  /** The Agent's name, when the service said it. */
  readonly agentName?: string | undefined;
  /** The Agent's page in the dashboard, when the gateway knows the service. */
  readonly dashboardUrl?: string | undefined;
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

/**
 * A page: titled with what it is and the Agent's name (`Terminal · my-agent`), the header naming
 * the Agent and leading back to its page in the dashboard.
 */
const page = (what: string, context: PageContext, body: string, head = '') => {
  const name = context.agentName ? escapeHtml(context.agentName) : undefined;
  const title = name ? `${what} · ${name}` : `${what} · Agent`;
  const back = context.dashboardUrl
    ? ` · <a href="${escapeHtml(context.dashboardUrl)}">Dashboard</a>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title}</title><link rel="icon" href="data:,"><style>${STYLE}</style>${head}</head>
<body><header><strong>${name ?? 'Agent'}</strong>
<nav><a href="${GATEWAY_PREFIX}/terminal">Terminal</a> · <a href="${GATEWAY_PREFIX}/editor">Editor</a>${back}</nav></header>
${body}</body></html>`;
};

export const indexPage = (context: PageContext = {}) =>
  page(
    'Home',
    context,
    '<main><p style="padding:1rem">Open the terminal or the editor above.</p></main>',
  );

export const terminalPage = (context: PageContext = {}) =>
  page(
    'Terminal',
    context,
    `<main><div id="terminal" role="application" aria-label="Terminal"></div></main>
<script type="module" src="${GATEWAY_PREFIX}/assets/terminal.js"></script>`,
    `<link rel="stylesheet" href="${GATEWAY_PREFIX}/assets/xterm.css">`,
  );

export const editorPage = (context: PageContext = {}) =>
  page(
    'Editor',
    context,
    `<main><nav id="tree" aria-label="Files"></nav>
<section id="pane"><div id="bar"><span id="path">No file open</span>
<button id="save" type="button" disabled>Save</button><span id="status" role="status"></span></div>
<div id="editor"></div></section></main>
<script type="module" src="${GATEWAY_PREFIX}/assets/editor.js"></script>`,
  );

/** Refuses scripts from anywhere but the gateway itself. */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
} as const;
