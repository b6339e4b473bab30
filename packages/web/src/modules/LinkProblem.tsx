import type { ReactNode } from 'react';
import { ApiError, issuesAt } from '../api/client.js';

const sentence = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`);

/**
 * Why a link from an e-mail does not work, in the words a person can act on: missing or cut
 * short (the contract's check, before anything is sent), or refused by the service (used,
 * expired, revoked: its own sentence). Undefined while nothing says so.
 */
export function linkProblem(token: string, error: unknown): string | undefined {
  if (!token) return 'This link is not complete: open it from the e-mail again.';
  if (!(error instanceof ApiError)) return undefined;
  if (error.error === 'invalid_link') return sentence(error.detail ?? error.message);
  const [issue] = issuesAt(error, 'token');
  return issue === undefined ? undefined : sentence(issue);
}

/** The problem, announced, and what to do instead (ask for a new link, go to the dashboard). */
export function LinkProblem(props: { problem: string; children: ReactNode }) {
  return (
    <>
      <div className="error" role="alert">
        {props.problem}
      </div>
      <p>{props.children}</p>
    </>
  );
}
