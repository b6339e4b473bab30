import type { BundleCard, SearchSort } from '@svc/contract';
import { escapeHtml } from '../util/escape-html.js';
import { formatTime, layout, type Reader } from './page-layout.html.js';

/** What a list page shows and links to: the search, as its query string carries it. */
export interface ListState {
  readonly q?: string;
  readonly tags: readonly string[];
  readonly account?: string;
  readonly sort?: SearchSort;
  readonly limit?: number;
}

/** A page of the list at `path` (`/explore`, `/{accountSlug}`) in this state; `cursor` pages on. */
export function listUrl(path: string, state: ListState, cursor?: string): string {
  const query = new URLSearchParams();
  if (state.q) query.set('q', state.q);
  for (const tag of state.tags) query.append('tag', tag);
  if (state.account !== undefined && path === '/explore') query.set('account', state.account);
  if (state.sort) query.set('sort', state.sort);
  if (state.limit !== undefined) query.set('limit', String(state.limit));
  if (cursor) query.set('cursor', cursor);
  const search = query.toString();
  return search ? `${path}?${search}` : path;
}

const link = (href: string, text: string, attributes = '') =>
  `<a href="${escapeHtml(href)}"${attributes}>${escapeHtml(text)}</a>`;

/** A bundle as a card; each tag is a chip adding `tag=` to the explore search. */
function card(item: BundleCard, state: ListState): string {
  const chips = item.tags
    .map((tag) => {
      const tags = state.tags.includes(tag) ? state.tags : [...state.tags, tag];
      return `<li>${link(listUrl('/explore', { ...state, tags }), tag)}</li>`;
    })
    .join('');
  const page = `/${encodeURIComponent(item.accountSlug)}/${encodeURIComponent(item.name)}`;
  const adoptions = `${item.adoptions} ${item.adoptions === 1 ? 'adoption' : 'adoptions'}`;
  return `<li class="card">
<h2>${link(page, item.displayName)}</h2>
<p class="address">${link(`/${encodeURIComponent(item.accountSlug)}`, item.accountSlug)}/${escapeHtml(item.name)} · version ${item.latestVersion} · published ${formatTime(item.lastPublishedAt)} · ${adoptions}</p>
<p class="description">${escapeHtml(item.description)}</p>
<ul class="tags">${chips}</ul>
</li>`;
}

interface ListInput {
  readonly reader: Reader;
  readonly state: ListState;
  readonly items: readonly BundleCard[];
  readonly nextCursor: string | null;
}

function cards(path: string, { state, items, nextCursor }: ListInput, empty: string): string {
  const list = items.length
    ? `<ul class="cards">${items.map((item) => card(item, state)).join('\n')}</ul>`
    : `<p class="empty">${escapeHtml(empty)}</p>`;
  const next = nextCursor
    ? `<p class="pages">${link(listUrl(path, state, nextCursor), 'Next page', ' rel="next"')}</p>`
    : '';
  return `${list}\n${next}`;
}

const SORTS: readonly [SearchSort, string][] = [
  ['relevance', 'Best match'],
  ['recent', 'Recently published'],
  ['adoptions', 'Most adopted'],
];

/** `/explore`: the search form, the tags in use (each removable), the orders, the cards. */
export function explorePage(input: ListInput & { readonly error?: string }): string {
  const { state } = input;
  const hidden = [
    ...state.tags.map((tag) => ['tag', tag]),
    ...(state.account !== undefined ? [['account', state.account]] : []),
    ...(state.sort ? [['sort', state.sort]] : []),
    ...(state.limit !== undefined ? [['limit', String(state.limit)]] : []),
  ]
    .map(([n, v]) => `<input type="hidden" name="${n}" value="${escapeHtml(v ?? '')}">`)
    .join('');
  const { account: _, ...anyAccount } = state;
  const filters = [
    ...state.tags.map(
      (tag) =>
        `<li>${link(listUrl('/explore', { ...state, tags: state.tags.filter((t) => t !== tag) }), `${tag} ×`, ' title="Remove this tag"')}</li>`,
    ),
    ...(state.account !== undefined
      ? [`<li>${link(listUrl('/explore', anyAccount), `account: ${state.account} ×`)}</li>`]
      : []),
  ].join('');
  const current = state.sort ?? (state.q?.trim() ? 'relevance' : 'recent');
  const sorts = SORTS.map(([sort, label]) =>
    sort === current
      ? `<strong aria-current="true">${label}</strong>`
      : link(listUrl('/explore', { ...state, sort }), label),
  ).join(' · ');
  const error = input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : '';
  return layout(
    input.reader,
    state.q ? `${state.q} · Explore bundles` : 'Explore bundles',
    `<h1>Explore bundles</h1>
<form method="get" action="/explore" role="search" class="search">
<input type="search" name="q" value="${escapeHtml(state.q ?? '')}" maxlength="200" placeholder="Search by name, description or tag" aria-label="Search bundles">${hidden}
<button type="submit">Search</button>
</form>
${error}${filters ? `<ul class="tags filters">${filters}</ul>` : ''}
<p class="sorts">Sort: ${sorts}</p>
${cards('/explore', input, 'No published bundle matches.')}`,
  );
}

/** `/{accountSlug}`: an account's published bundles, most recently published first. */
export function accountPage(
  input: ListInput & { readonly account: { slug: string; name: string } },
): string {
  const { account } = input;
  return layout(
    input.reader,
    `${account.name} · ${account.slug}`,
    `<h1>${escapeHtml(account.name)}</h1>
<p class="address">${escapeHtml(account.slug)} · ${link(listUrl('/explore', { tags: [], account: account.slug }), 'search its bundles')}</p>
${cards(`/${encodeURIComponent(account.slug)}`, input, 'This account has not published a bundle yet.')}`,
  );
}
