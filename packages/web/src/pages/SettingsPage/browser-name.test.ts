import { describe, expect, it } from 'vitest';
import { browserName } from './browser-name.js';

describe('browserName', () => {
  it('names the browser and its system as people say them', () => {
    expect(
      browserName('Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0'),
    ).toBe('Firefox on Linux');
    expect(
      browserName(
        'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
      ),
    ).toBe('Safari on iOS');
    expect(
      browserName(
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
      ),
    ).toBe('Microsoft Edge on Windows');
  });

  it('names a client that is no browser by its product, and says when there is nothing', () => {
    expect(browserName('curl/8.5.0')).toBe('curl 8.5.0');
    expect(browserName(null)).toBe('Unknown browser');
    expect(browserName('')).toBe('Unknown browser');
    expect(browserName('???')).toBe('Unknown browser');
  });
});
