export function Loading(props: { what?: string }) {
  return (
    <p className="loading" role="status">
      Loading{props.what ? ` ${props.what}` : ''}…
    </p>
  );
}
