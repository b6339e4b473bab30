/** A failure announced to screen readers; shows the error's readable sentence. */
export function ErrorMessage(props: { error: unknown; title?: string }) {
  if (!props.error) return null;
  const message = props.error instanceof Error ? props.error.message : String(props.error);
  return (
    <div className="error" role="alert">
      {props.title && <strong>{props.title} </strong>}
      {message}
    </div>
  );
}
