import type { BundleCard } from '@svc/contract';
import { useId } from 'react';
import { Link } from 'react-router';
import { formatDate } from '../../modules/format.js';

/** A published bundle found by search: what it is, its public page, its tags, and Adopt. */
export function ExploreCard(props: {
  item: BundleCard;
  /** Tags in the search (pressed: a click takes one out); the others narrow it. */
  searchedTags: readonly string[];
  onTag: (tag: string) => void;
}) {
  const { item } = props;
  const headingId = useId();
  const adoptions = `${item.adoptions} ${item.adoptions === 1 ? 'adoption' : 'adoptions'}`;
  return (
    <article className="card found" aria-labelledby={headingId}>
      <h2 id={headingId}>
        <a href={item.url}>{item.displayName}</a>
      </h2>
      <p className="muted">
        <code>
          {item.accountSlug}/{item.name}
        </code>{' '}
        · version {item.latestVersion} · published {formatDate(item.lastPublishedAt)} · {adoptions}
      </p>
      {item.description && <p>{item.description}</p>}
      {item.tags.length > 0 && (
        <ul className="chips" aria-label={`Tags of ${item.displayName}`}>
          {item.tags.map((tag) => (
            <li key={tag}>
              <button
                type="button"
                className="chip"
                aria-pressed={props.searchedTags.includes(tag)}
                onClick={() => props.onTag(tag)}
              >
                {tag}
              </button>
            </li>
          ))}
        </ul>
      )}
      <Link
        className="button primary"
        to={`/adopt/${item.accountSlug}/${item.name}`}
        aria-label={`Adopt ${item.displayName}`}
      >
        Adopt
      </Link>
    </article>
  );
}
