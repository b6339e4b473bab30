import { ApiError } from '../api/client.js';

/**
 * A failure announced to screen readers, in the error's readable sentence. A rejected form whose
 * every issue is shown next to its field (`issuesAt`) adds nothing here: one message per error.
 * Issues no field took are said here.
 */
export function ErrorMessage(props: { error: unknown; title?: string }) {
  if (!props.error) return null;
  const message = sentenceOf(props.error);
  if (!message) return null;
  return (
    <div className="error" role="alert">
      {props.title && <strong>{props.title} </strong>}
      {message}
    </div>
  );
}

function sentenceOf(error: unknown): string | undefined {
  if (!(error instanceof ApiError) || error.error !== 'invalid_request' || !error.issues.length)
    return error instanceof Error ? error.message : String(error);
  const rest = error.issues.filter((issue) => !error.shownAtFields.has(issue));
  if (rest.length === 0) return undefined;
  // None was shown at a field: the error's own sentence (a request-wide issue's words).
  if (rest.length === error.issues.length) return error.message;
  return [...new Set(rest.map((issue) => issue.message))].join(' ');
}
