import type { UseQueryResult } from '@tanstack/react-query';
import { type LucideIcon, Plus } from 'lucide-react';
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { Empty } from '../components/Empty.js';
import { QueryView } from '../components/QueryView.js';

/**
 * A list of one kind of machine (Agents, Plain VMs): its heading with the create button, cards
 * while loading, one card per machine, or, when there is none, what it is and the create button
 * there (once on the page, so it has one name to find).
 */
export function MachineListPage<T extends { readonly id: string }>(props: {
  title: string;
  newLabel: string;
  newPath: string;
  empty: { title: string; icon: LucideIcon; sentence: string };
  query: UseQueryResult<T[]>;
  card: (machine: T) => ReactNode;
}) {
  const create = (
    <Link className="button primary" to={props.newPath}>
      <Plus className="icon" /> {props.newLabel}
    </Link>
  );
  return (
    <section>
      <div className="page-head">
        <h1>{props.title}</h1>
        {/* An empty list offers it in its own place instead. */}
        {props.query.data?.length !== 0 && create}
      </div>
      <QueryView query={props.query} what={props.title} shape="cards">
        {(list) =>
          list.length === 0 ? (
            <Empty title={props.empty.title} icon={props.empty.icon} action={create}>
              {props.empty.sentence}
            </Empty>
          ) : (
            <ul className="cards">{list.map(props.card)}</ul>
          )
        }
      </QueryView>
    </section>
  );
}
