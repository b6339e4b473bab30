/**
 * A loading part of a page: grey shapes where its content will be (a list's cards or a few
 * lines), and the words for screen readers. Never a bare "Loading…".
 */
export function Loading(props: { what?: string; shape?: 'cards' | 'lines' }) {
  return (
    <div className="skeleton" role="status">
      <span className="visually-hidden">Loading{props.what ? ` ${props.what}` : ''}…</span>
      {props.shape === 'cards' ? (
        <div className="skeleton-cards">
          <div className="skeleton-card" />
          <div className="skeleton-card" />
          <div className="skeleton-card" />
        </div>
      ) : (
        <>
          <div className="skeleton-line" />
          <div className="skeleton-line" />
          <div className="skeleton-line short" />
        </>
      )}
    </div>
  );
}

/** A whole page loading (its code or its first data): a heading's shape above the lines. */
export function PageLoading(props: { what?: string }) {
  return (
    <div className="skeleton">
      <div className="skeleton-line title" />
      <Loading {...props} />
    </div>
  );
}
