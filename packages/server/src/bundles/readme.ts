import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';

// Raw HTML off: a README's `<script>` or `<img onerror>` stays text. markdown-it's link validator
// already refuses `javascript:`, `vbscript:`, `file:` and non-image `data:` URLs.
const markdown = new MarkdownIt({ html: false, linkify: true, typographer: false });

/**
 * The second line of defence, in case a markdown-it change or plugin ever lets markup through:
 * a GitHub-like allowlist, no event handlers, no styles, http(s) and mailto links only.
 */
const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'p',
    'br',
    'hr',
    'blockquote',
    'pre',
    'code',
    'em',
    'strong',
    'del',
    's',
    'ul',
    'ol',
    'li',
    'a',
    'img',
    'table',
    'thead',
    'tbody',
    'tr',
    'th',
    'td',
  ],
  allowedAttributes: {
    a: ['href', 'title', 'rel'],
    img: ['src', 'alt', 'title'],
    ol: ['start'],
    th: ['style'],
    td: ['style'],
  },
  allowedStyles: {
    th: { 'text-align': [/^(left|right|center)$/] },
    td: { 'text-align': [/^(left|right|center)$/] },
  },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowProtocolRelative: false,
  transformTags: {
    a: sanitizeHtml.simpleTransform('a', { rel: 'nofollow ugc noopener noreferrer' }),
  },
};

/** A README as safe HTML: no script, no event handlers, no `javascript:` links. */
export function renderReadme(source: string): string {
  return sanitizeHtml(markdown.render(source), SANITIZE);
}
