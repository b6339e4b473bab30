import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ErrorMessage } from './ErrorMessage.js';
import { Loading } from './Loading.js';

/** Renders a query's loading and error states, and its data once there. */
export function QueryView<T>(props: {
  query: UseQueryResult<T>;
  what: string;
  /** What the skeleton looks like while loading (a list's cards, or lines). */
  shape?: 'cards' | 'lines';
  children: (data: T) => ReactNode;
}) {
  const { query } = props;
  if (query.isPending)
    return <Loading what={props.what} {...(props.shape && { shape: props.shape })} />;
  if (query.isError)
    return (
      <div>
        <ErrorMessage error={query.error} title={`Could not load ${props.what}.`} />
        <button type="button" onClick={() => query.refetch()}>
          Try again
        </button>
      </div>
    );
  return <>{props.children(query.data)}</>;
}
