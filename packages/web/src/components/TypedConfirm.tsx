import { useId, useState } from 'react';

/**
 * Destroying asks for the resource's name to be typed, so it is never one stray click. The label
 * names the kind as the button does: `Destroy Plain VM` asks "Type web-1 to destroy this Plain VM".
 */
export function TypedConfirm(props: {
  name: string;
  /** The button: a verb, then the kind in the product's words (`Destroy Plain VM`). */
  action: string;
  pending?: boolean;
  onConfirm: () => void;
}) {
  const [typed, setTyped] = useState('');
  const id = useId();
  const [verb, ...kind] = props.action.split(' ');
  return (
    <form
      className="typed-confirm"
      onSubmit={(event) => {
        event.preventDefault();
        if (typed === props.name) props.onConfirm();
      }}
    >
      <label htmlFor={id}>
        Type <code>{props.name}</code> to {verb?.toLowerCase()} this {kind.join(' ')}
      </label>
      <input id={id} value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" />
      <button type="submit" className="danger" disabled={typed !== props.name || props.pending}>
        {props.action}
      </button>
    </form>
  );
}
