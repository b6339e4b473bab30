import { Field } from '../../components/Field.js';

export interface RuleDraft {
  protocol: 'tcp' | 'udp';
  port: string;
  /** Addresses or CIDRs separated by commas or spaces. */
  sources: string;
  description: string;
}

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
  return (
    <li className="rule" aria-label={`Rule ${n}`}>
      <div className="rule-fields">
        <Field label={`Protocol (rule ${n})`}>
          {(control) => (
            <select
              {...control}
              value={draft.protocol}
              onChange={(e) => set('protocol', e.target.value as RuleDraft['protocol'])}
            >
              <option value="tcp">TCP</option>
              <option value="udp">UDP</option>
            </select>
          )}
        </Field>
        <Field label={`Port (rule ${n})`}>
          {(control) => (
            <input
              {...control}
              value={draft.port}
              placeholder="443 or 8000-8100"
              onChange={(e) => set('port', e.target.value)}
            />
          )}
        </Field>
        <Field label={`Sources (rule ${n})`}>
          {(control) => (
            <input
              {...control}
              value={draft.sources}
              placeholder="203.0.113.0/24, ::/0"
              onChange={(e) => set('sources', e.target.value)}
            />
          )}
        </Field>
        <Field label={`Description (rule ${n})`}>
          {(control) => (
            <input
              {...control}
              value={draft.description}
              onChange={(e) => set('description', e.target.value)}
            />
          )}
        </Field>
        <button type="button" className="danger" onClick={props.onRemove}>
          Remove rule {n}
        </button>
      </div>
      {props.errors.length > 0 && (
        <ul className="field-errors" role="alert">
          {props.errors.map((message) => (
            <li key={message}>{message}</li>
          ))}
        </ul>
      )}
    </li>
  );
}
