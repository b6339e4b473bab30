import type { ReactNode } from 'react';

export function Empty(props: { children: ReactNode }) {
  return <div className="empty">{props.children}</div>;
}
