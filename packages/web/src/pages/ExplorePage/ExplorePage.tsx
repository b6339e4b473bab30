import type { SearchSort } from '@svc/contract';
import { useInfiniteQuery } from '@tanstack/react-query';
import { Compass } from 'lucide-react';
import { useState } from 'react';
import { searchQuery } from '../../api/queries/bundles.js';
import { Empty } from '../../components/Empty.js';
import { Field } from '../../components/Field.js';
import { QueryView } from '../../components/QueryView.js';
import { useDebounced } from '../../modules/use-debounced.js';
import { useTitle } from '../../modules/use-title.js';
import { ExploreCard } from './ExploreCard.js';

/** Long enough to skip the keystrokes of a word, short enough to feel like it follows typing. */
const SEARCH_DELAY_MS = 300;

/** The orders `GET /api/glamps` knows, named as the public `/explore` page names them. */
const SORTS: readonly [SearchSort, string][] = [
  ['relevance', 'Best match'],
  ['recent', 'Recently published'],
  ['adoptions', 'Most adopted'],
];

/** Published bundles of every account: search as you type, narrow by tags, adopt one. */
export function ExplorePage() {
  useTitle('Explore');
  const [text, setText] = useState('');
  const [tags, setTags] = useState<string[]>([]);
  const [sort, setSort] = useState<SearchSort>();
  const q = useDebounced(text.trim(), SEARCH_DELAY_MS);
  const results = useInfiniteQuery(searchQuery({ q, tag: tags, sort }));
  const toggleTag = (tag: string) =>
    setTags(tags.includes(tag) ? tags.filter((t) => t !== tag) : [...tags, tag]);

  return (
    <section>
      <h1>Explore</h1>
      <p className="hint">
        Bundles that Agents published. Adopting one makes a new Agent whose home starts as its
        files.
      </p>
      <search className="search-bar">
        <Field label="Search">
          {(control) => (
            <input
              {...control}
              type="search"
              value={text}
              maxLength={200}
              placeholder="Name, description or tag"
              onChange={(e) => setText(e.target.value)}
            />
          )}
        </Field>
        <Field label="Sort">
          {(control) => (
            <select
              {...control}
              // Without a choice the server's default: best match for words, else most recent.
              value={sort ?? (q ? 'relevance' : 'recent')}
              onChange={(e) => setSort(e.target.value as SearchSort)}
            >
              {SORTS.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
      </search>
      {tags.length > 0 && (
        <ul className="chips" aria-label="Searched tags">
          {tags.map((tag) => (
            <li key={tag}>
              <button
                type="button"
                className="chip"
                aria-label={`Remove tag ${tag}`}
                onClick={() => toggleTag(tag)}
              >
                {tag} ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <QueryView query={results} what="bundles">
        {({ pages }) => {
          const items = pages.flatMap((page) => page.items);
          if (items.length === 0)
            return (
              <Empty title="No published bundle matches." icon={Compass}>
                Try fewer words or another tag.
              </Empty>
            );
          return (
            <ul className="cards">
              {items.map((item) => (
                <li key={`${item.accountSlug}/${item.name}`}>
                  <ExploreCard item={item} searchedTags={tags} onTag={toggleTag} />
                </li>
              ))}
            </ul>
          );
        }}
      </QueryView>
      {results.hasNextPage && (
        <button
          type="button"
          className="load-more"
          disabled={results.isFetchingNextPage}
          onClick={() => results.fetchNextPage()}
        >
          {results.isFetchingNextPage ? 'Loading…' : 'Load more'}
        </button>
      )}
    </section>
  );
}
