import { parseDocument } from 'htmlparser2';
import { describe, expect, it } from 'vitest';
import { XSS_PAYLOADS, XSS_README } from '../../test/xss-payloads.js';
import { renderReadme } from './readme.js';

const SCRIPT_CAPABLE = new Set([
  'script',
  'iframe',
  'object',
  'embed',
  'style',
  'link',
  'meta',
  'base',
  'form',
  'input',
  'button',
  'svg',
  'math',
  'frame',
  'frameset',
  'template',
  'textarea',
  'video',
  'audio',
  'source',
]);
const URL_ATTRIBUTES = new Set([
  'href',
  'src',
  'action',
  'formaction',
  'xlink:href',
  'background',
  'data',
  'poster',
]);

/** Everything in rendered HTML that could run script, as a browser would read it. */
export function unsafeParts(html: string): string[] {
  const found: string[] = [];
  type Node = { type: string; name?: string; attribs?: Record<string, string>; children?: Node[] };
  const visit = (node: Node) => {
    // htmlparser2 types <script> and <style> apart from other tags.
    if (node.name && node.attribs && ['tag', 'script', 'style'].includes(node.type)) {
      if (SCRIPT_CAPABLE.has(node.name)) found.push(`<${node.name}>`);
      for (const [name, value] of Object.entries(node.attribs)) {
        if (/^on/i.test(name) || name === 'srcdoc') found.push(`${node.name}[${name}]`);
        // Browsers drop ASCII whitespace and control characters inside a scheme.
        // biome-ignore lint/suspicious/noControlCharactersInRegex: exactly those characters.
        const url = value.replace(/[\u0000-\u0020]/g, '').toLowerCase();
        if (URL_ATTRIBUTES.has(name) && /^(javascript|vbscript|data|file):/.test(url)) {
          found.push(`${node.name}[${name}=${value}]`);
        }
        if (name === 'style' && /url\(|expression/i.test(value)) found.push(`${node.name}[style]`);
      }
    }
    for (const child of node.children ?? []) visit(child);
  };
  for (const node of parseDocument(html).children) visit(node as unknown as Node);
  return found;
}

describe('README rendering', () => {
  it('leaves nothing script-capable in any XSS payload', () => {
    const unsafe = XSS_PAYLOADS.map((p) => ({ p, found: unsafeParts(renderReadme(p)) })).filter(
      (r) => r.found.length,
    );
    console.log(
      `README XSS corpus: ${XSS_PAYLOADS.length} payloads, ${unsafe.length} unsafe outputs`,
    );
    expect(unsafe).toEqual([]);
    expect(unsafeParts(renderReadme(XSS_README))).toEqual([]);
  });

  it('keeps ordinary markdown: headings, emphasis, code, tables and safe links', () => {
    const html = renderReadme(
      '# Title\n\n*em* **strong** `code`\n\n[site](https://example.com) <https://a.example>\n\n| a |\n|---|\n| 1 |\n',
    );
    expect(html).toContain('<h1>Title</h1>');
    expect(html).toContain('<em>em</em>');
    expect(html).toContain(
      '<a href="https://example.com" rel="nofollow ugc noopener noreferrer">site</a>',
    );
    expect(html).toContain('<td>1</td>');
  });

  it('the oracle itself sees the dangerous parts (so the test above can fail)', () => {
    expect(
      unsafeParts('<img src=x onerror=alert(1)><a href=" java\tscript:x">a</a><script></script>'),
    ).toEqual(['img[onerror]', 'a[href= java\tscript:x]', '<script>']);
  });
});
