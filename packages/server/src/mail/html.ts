import { escapeHtml } from '../util/escape-html.js';

/** HTML that is already safe to embed: what `html` returns, so nesting does not escape twice. */
export class SafeHtml {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value;
  }
}

type HtmlValue = string | SafeHtml | readonly SafeHtml[] | undefined;

/**
 * A tagged template for mail bodies that escapes every interpolated string, so a template cannot
 * forget to (names and other data come from users). `undefined` renders as nothing.
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  const render = (value: HtmlValue): string => {
    if (value === undefined) return '';
    if (value instanceof SafeHtml) return value.value;
    if (typeof value === 'string') return escapeHtml(value);
    return value.map(render).join('');
  };
  return new SafeHtml(strings.reduce((out, part, i) => out + render(values[i - 1]) + part));
}
