import { describe, expect, it } from 'vitest';
import { isPortPath } from './agent-ports.js';

describe('isPortPath', () => {
  it('takes a path on the port host and nothing a browser could read as another host', () => {
    for (const path of ['/', '/app?x=1#top', '/a/b%20c']) expect(isPortPath(path), path).toBe(true);
    for (const path of ['', 'x', '//evil.example', '/\\evil.example', '/\t/evil.example']) {
      expect(isPortPath(path), JSON.stringify(path)).toBe(false);
    }
    for (const path of ['/\n/evil.example', '/ a', '/\u007f', 'https://evil.example']) {
      expect(isPortPath(path), JSON.stringify(path)).toBe(false);
    }
  });
});
