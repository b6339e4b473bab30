import { invalidInput } from './errors.js';

/** Hetzner's `meta.pagination`; every key is present, some null at the ends. */
export interface PaginationMeta {
  readonly page: number;
  readonly per_page: number;
  readonly previous_page: number | null;
  readonly next_page: number | null;
  readonly last_page: number;
  readonly total_entries: number;
}

const DEFAULT_PER_PAGE = 25;
// The description: "the maximum value is 50 except otherwise specified"; a larger per_page is
// answered with 50 items, not refused.
const MAX_PER_PAGE = 50;

function positiveInteger(query: URLSearchParams, name: string, fallback: number): number {
  const text = query.get(name);
  if (text === null || text === '') return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1)
    throw invalidInput(name, 'must be a positive integer');
  return Number(text);
}

/** One page of `items` as `page`/`per_page` ask, with the meta Hetzner answers. */
export function paginate<T>(items: readonly T[], query: URLSearchParams) {
  const page = positiveInteger(query, 'page', 1);
  const perPage = Math.min(positiveInteger(query, 'per_page', DEFAULT_PER_PAGE), MAX_PER_PAGE);
  const lastPage = Math.max(1, Math.ceil(items.length / perPage));
  const meta: PaginationMeta = {
    page,
    per_page: perPage,
    previous_page: page > 1 ? page - 1 : null,
    next_page: page < lastPage ? page + 1 : null,
    last_page: lastPage,
    total_entries: items.length,
  };
  return { items: items.slice((page - 1) * perPage, page * perPage), meta };
}

/** The `Link` header Hetzner adds to list answers (`prev`, `next`, `last`). */
export function linkHeader(baseUrl: string, path: string, meta: PaginationMeta): string {
  const link = (page: number, rel: string) =>
    `<${baseUrl}${path}?page=${page}&per_page=${meta.per_page}>; rel="${rel}"`;
  const links: string[] = [];
  if (meta.previous_page !== null) links.push(link(meta.previous_page, 'prev'));
  if (meta.next_page !== null) links.push(link(meta.next_page, 'next'));
  links.push(link(meta.last_page, 'last'));
  return links.join(', ');
}
