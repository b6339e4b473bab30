import { GATEWAY_PREFIX } from '@svc/contract/gateway-ticket';

/** What every page says about whose gateway it is. */
export interface PageContext {
  /** The Agent's name, when the service said it. */
  readonly agentName?: string | undefined;
  /** The Agent's page in the dashboard, when the gateway knows the service. */
  readonly dashboardUrl?: string | undefined;
  /** Which editor the Editor page is: code-server when the machine has it, else the built-in. */
  readonly editor?: 'code-server' | 'built-in' | undefined;
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

type Section = 'home' | 'editor' | 'terminal';

const SECTIONS: readonly [Section, string, string][] = [
  ['home', 'Home', `${GATEWAY_PREFIX}/`],
  ['editor', 'Editor', `${GATEWAY_PREFIX}/editor`],
  ['terminal', 'Terminal', `${GATEWAY_PREFIX}/terminal`],
];

/**
 * A page: titled with what it is and the Agent's name (`Terminal · my-agent`), the header naming
 * the Agent, its sections (this one marked), and leading back to its page in the dashboard. Its
 * look is the dashboard's (`gateway.css`, built on the dashboard's tokens).
 */
const page = (section: Section, context: PageContext, main: string, head = '') => {
  const what = SECTIONS.find(([key]) => key === section)?.[1] ?? 'Home';
  const name = context.agentName ? escapeHtml(context.agentName) : undefined;
  const title = name ? `${what} · ${name}` : `${what} · Agent`;
  const links = SECTIONS.map(
    ([key, label, href]) =>
      `<a href="${href}"${key === section ? ' aria-current="page"' : ''}>${label}</a>`,
  );
  if (context.dashboardUrl)
    links.push(`<a href="${escapeHtml(context.dashboardUrl)}">Dashboard</a>`);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title}</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="${GATEWAY_PREFIX}/assets/gateway.css">${head}</head>
<body><header class="topbar"><strong>${name ?? 'Agent'}</strong>
<nav aria-label="Agent">${links.join('\n')}</nav></header>
${main}</body></html>`;
};

export const indexPage = (context: PageContext = {}) =>
  page(
    'home',
    context,
    `<main class="home"><h1>${context.agentName ? escapeHtml(context.agentName) : 'This Agent'}</h1>
<div class="cards">
<a class="card" href="${GATEWAY_PREFIX}/editor"><h2>Editor</h2><p>${
      context.editor === 'code-server'
        ? 'VS Code in the browser (code-server), opened on the home directory.'
        : 'The files of the home directory: open, edit, create, rename and delete them.'
    }</p></a>
<a class="card" href="${GATEWAY_PREFIX}/terminal"><h2>Terminal</h2><p>A shell on this machine, as its user; it stays when the page reloads.</p></a>
</div></main>`,
  );

export const terminalPage = (context: PageContext = {}) =>
  page(
    'terminal',
    context,
    `<main class="app"><h1 class="visually-hidden">Terminal</h1><div id="terminal" role="application" aria-label="Terminal"></div></main>
<script type="module" src="${GATEWAY_PREFIX}/assets/terminal.js"></script>`,
    `<link rel="stylesheet" href="${GATEWAY_PREFIX}/assets/xterm.css">`,
  );

export const editorPage = (context: PageContext = {}) =>
  page(
    'editor',
    context,
    `<main class="app editor"><h1 class="visually-hidden">Editor</h1><nav id="tree" aria-label="Files"></nav>
<section id="pane" aria-label="File"><div class="bar"><span id="path">No file open</span>
<button id="new" type="button">New file</button>
<button id="rename" type="button" disabled>Rename</button>
<button id="delete" type="button" class="danger" disabled>Delete</button>
<button id="save" type="button" class="primary" disabled>Save</button>
<span id="status" role="status"></span></div>
<form id="ask" hidden><label id="ask-label" for="ask-input">Name</label>
<input id="ask-input" autocomplete="off" spellcheck="false">
<button id="ask-ok" type="submit" class="primary">OK</button>
<button id="ask-cancel" type="button">Cancel</button></form>
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
