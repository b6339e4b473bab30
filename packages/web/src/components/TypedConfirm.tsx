import { useId, useState } from 'react';

/** Destroying asks for the resource's name to be typed, so it is never one stray click. */
export function TypedConfirm(props: {
  name: string;
  action: string;
  pending?: boolean;
  onConfirm: () => void;
}) {
  const [typed, setTyped] = useState('');
  const id = useId();
  return (
    <form
      className="typed-confirm"
      onSubmit={(event) => {
        event.preventDefault();
        if (typed === props.name) props.onConfirm();
      }}
    >
      <label htmlFor={id}>
        Type <code>{props.name}</code> to {props.action.toLowerCase()}
      </label>
      <input id={id} value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" />
      <button type="submit" className="danger" disabled={typed !== props.name || props.pending}>
        {props.action}
      </button>
    </form>
  );
}
