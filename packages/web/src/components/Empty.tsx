import type { LucideIcon } from 'lucide-react';
import type { ReactNode } from 'react';

/**
 * An empty list: what would be there (`title`), a sentence on it, and the step that fills it
 * (`action`: a link or button), so an empty page is never a dead end.
 */
export function Empty(props: {
  title: string;
  icon?: LucideIcon;
  action?: ReactNode;
  children?: ReactNode;
}) {
  const Icon = props.icon;
  return (
    <div className="empty">
      {Icon && <Icon className="icon" />}
      <p className="empty-title">{props.title}</p>
      {props.children && <p>{props.children}</p>}
      {props.action}
    </div>
  );
}
