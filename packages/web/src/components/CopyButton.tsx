import { useState } from 'react';

/** Copies a text to the clipboard and says so; if the browser refuses, asks to copy by hand. */
export function CopyButton(props: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = () =>
    navigator.clipboard.writeText(props.text).then(
      () => setState('copied'),
      () => setState('failed'),
    );
  return (
    <span className="copy">
      <button type="button" onClick={copy}>
        {props.label ?? 'Copy'}
      </button>
      <span aria-live="polite">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select the text and copy it' : ''}
      </span>
    </span>
  );
}
