import type { z } from 'zod';
import type { ValidationIssue } from './errors.js';
import { firstIssuePerPath, humanIssueMessage } from './issue-messages.js';

/** The issue code of a string that is not well-formed text. */
export const INVALID_TEXT = 'invalid_text';

/** A part of a request, as the first segment of its issues' paths. */
export type RequestPart = 'params' | 'query' | 'body';

type Path = (string | number)[];

function textProblem(text: string): string | undefined {
  // PostgreSQL's text cannot hold U+0000 (the statement fails), and an unpaired surrogate has no
  // UTF-8 form (drivers would store U+FFFD in its place): neither is text the service can keep.
  if (text.includes('\u0000')) return 'Must not contain the NUL character (U+0000)';
  if (!text.isWellFormed()) return 'Must be well-formed Unicode (it has an unpaired surrogate)';
  return undefined;
}

/**
 * One issue for every string in `value` (a parsed JSON body, path parameters or a query) that is
 * not well-formed text, object keys included, wherever it sits: whether or not a schema
 * describes the field, so a field added to any schema is covered without doing anything.
 */
export function textIssues(value: unknown, prefix: Path = []): ValidationIssue[] {
  // A path is kept as a link to its parent and spelled out only for an issue: copying it at every
  // level would be quadratic in the depth, and a 1 MiB body can nest half a million levels.
  type Link = { parent: Link | undefined; segment: string | number } | undefined;
  const spell = (link: Link): Path => {
    const path: Path = [];
    for (let at = link; at; at = at.parent) path.push(at.segment);
    return [...prefix, ...path.reverse()];
  };
  const issues: ValidationIssue[] = [];
  // Iterative, not recursive, for the same reason: the call stack is not that deep.
  const pending: [unknown, Link][] = [[value, undefined]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, link] = next;
    if (typeof item === 'string') {
      const message = textProblem(item);
      if (message) issues.push({ path: spell(link), message, code: INVALID_TEXT });
    } else if (Array.isArray(item)) {
      item.forEach((element, index) => {
        pending.push([element, { parent: link, segment: index }]);
      });
    } else if (item !== null && typeof item === 'object') {
      for (const [key, element] of Object.entries(item)) {
        const message = textProblem(key);
        if (message)
          issues.push({ path: spell(link), message: `A key: ${message}`, code: INVALID_TEXT });
        pending.push([element, { parent: link, segment: key }]);
      }
    }
  }
  return issues;
}

/** Zod's issues as the error envelope's, their paths under `prefix`. */
export function toValidationIssues(
  issues: readonly { path: readonly PropertyKey[]; message: string; code: string }[],
  prefix: Path = [],
): ValidationIssue[] {
  return issues.map((issue) => ({
    path: [
      ...prefix,
      ...issue.path.map((segment) => (typeof segment === 'number' ? segment : String(segment))),
    ],
    message: issue.message,
    code: issue.code,
  }));
}

export type RequestPartResult<T> =
  | { success: true; data: T }
  | { success: false; issues: ValidationIssue[] };

/**
 * The one check of a request part, for the server and for clients alike: every string must be
 * well-formed text (checked first, on the raw value, so no refinement or transform ever sees
 * one that is not), then the endpoint's schema must accept the value. Its issues read as
 * sentences (`humanIssueMessage`), one per field.
 */
export function parseRequestPart<S extends z.ZodType>(
  schema: S,
  value: unknown,
  part: RequestPart,
): RequestPartResult<z.output<S>> {
  const malformed = textIssues(value, [part]);
  if (malformed.length > 0) return { success: false, issues: malformed };
  // Sentences for zod's own issues where a schema gave none; one issue per field.
  const result = schema.safeParse(value, { error: humanIssueMessage });
  if (result.success) return { success: true, data: result.data };
  const issues = firstIssuePerPath(result.error.issues);
  return { success: false, issues: toValidationIssues(issues, [part]) };
}
