import { useId } from 'react';

export interface RuleDraft {
  protocol: 'tcp' | 'udp';
  port: string;
  /** Addresses or CIDRs separated by commas or spaces. */
  sources: string;
  description: string;
}

/** The columns of the rules table, in order; each row's controls are named after them. */
export const RULE_COLUMNS = ['Protocol', 'Port', 'Sources', 'Description'] as const;

/**
 * One rule: a row of controls under the table's one header row, each named for a screen reader
 * by its column and rule number ("Port (rule 2)"), and the server's messages about it under it.
 */
export function FirewallRuleRow(props: {
  index: number;
  draft: RuleDraft;
  errors: string[];
  onChange: (next: RuleDraft) => void;
  onRemove: () => void;
}) {
  const { draft } = props;
  const set = <K extends keyof RuleDraft>(key: K, value: RuleDraft[K]) =>
    props.onChange({ ...draft, [key]: value });
  const n = props.index + 1;
  const errorsId = useId();
  const control = (column: (typeof RULE_COLUMNS)[number]) => ({
    'aria-label': `${column} (rule ${n})`,
    'aria-invalid': props.errors.length > 0,
    ...(props.errors.length > 0 && { 'aria-describedby': errorsId }),
  });
  return (
    <tbody aria-label={`Rule ${n}`}>
      <tr>
        <td>
          <select
            {...control('Protocol')}
            value={draft.protocol}
            onChange={(e) => set('protocol', e.target.value as RuleDraft['protocol'])}
          >
            <option value="tcp">TCP</option>
            <option value="udp">UDP</option>
          </select>
        </td>
        <td>
          <input
            {...control('Port')}
            value={draft.port}
            placeholder="443 or 8000-8100"
            onChange={(e) => set('port', e.target.value)}
          />
        </td>
        <td>
          <input
            {...control('Sources')}
            value={draft.sources}
            placeholder="203.0.113.0/24, ::/0"
            onChange={(e) => set('sources', e.target.value)}
          />
        </td>
        <td>
          <input
            {...control('Description')}
            value={draft.description}
            onChange={(e) => set('description', e.target.value)}
          />
        </td>
        <td>
          <button
            type="button"
            className="danger"
            aria-label={`Remove rule ${n}`}
            onClick={props.onRemove}
          >
            Remove
          </button>
        </td>
      </tr>
      {props.errors.length > 0 && (
        <tr>
          <td colSpan={RULE_COLUMNS.length + 1}>
            <div role="alert" className="rule-errors">
              <ul className="field-errors" id={errorsId}>
                {props.errors.map((message) => (
                  <li key={message}>{message}</li>
                ))}
              </ul>
            </div>
          </td>
        </tr>
      )}
    </tbody>
  );
}
