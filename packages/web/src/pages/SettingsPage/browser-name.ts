import Bowser from 'bowser';

/**
 * A session's User-Agent as people say it: "Firefox on Linux", "Safari on iOS". Parsed here, in
 * the page that shows it, by bowser (a maintained parser; this code is split off with the
 * Settings page): the API keeps the exact header for scripts and audits, and only this table
 * needs the short form. A client that is no browser (`curl/8.5.0`) is named by its product.
 */
export function browserName(userAgent: string | null): string {
  if (!userAgent) return 'Unknown browser';
  const { browser, os } = Bowser.parse(userAgent);
  if (browser.name) return os.name ? `${browser.name} on ${os.name}` : browser.name;
  const product = /^([\w.-]+)\/([\w.-]+)/.exec(userAgent);
  if (product) return `${product[1]} ${product[2]}`;
  return 'Unknown browser';
}
