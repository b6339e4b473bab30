import { describe, expect, it } from 'vitest';
import { mergeCredentials, stripEnvFile, stripOpenclawJson } from './credentials.js';

/** `${KEY}`, the placeholder stage writes. */
const ph = (key: string) => ['$', '{', key, '}'].join('');

describe('credential stripping', () => {
  it('replaces every value of an env file, keeping comments, export and empty values', () => {
    const input = `# keys\nexport A_KEY="secret one"\nB=two\r\nEMPTY=\nC=${ph('C')}\nnot a line\n`;
    const out = stripEnvFile('.openclaw/.env', input);
    expect(out.text).toBe(
      `# keys\nexport A_KEY=${ph('A_KEY')}\nB=${ph('B')}\r\nEMPTY=\nC=${ph('C')}\nnot a line\n`,
    );
    expect(out.text).not.toMatch(/secret one|two/);
    expect(out.credentials).toEqual([
      {
        key: 'A_KEY',
        description: 'Environment variable from ~/.openclaw/.env',
        locations: ['.openclaw/.env:2'],
      },
      {
        key: 'B',
        description: 'Environment variable from ~/.openclaw/.env',
        locations: ['.openclaw/.env:3'],
      },
    ]);
  });

  it('replaces secret-looking fields of openclaw.json, named after their service, with lines', () => {
    const input = JSON.stringify({
      models: {
        providers: {
          openai: { apiKey: 'sk-1', baseUrl: 'https://api' },
          anthropic: { apiKey: 'sk-2' },
        },
      },
      gateway: { auth: { token: 'tok' }, port: 1 },
      channels: [{ botToken: 'b1' }, { botToken: 'b2' }],
      note: 'keep me',
    });
    const out = stripOpenclawJson('.openclaw/openclaw.json', input);
    const parsed = JSON.parse(out.text);
    expect(parsed.models.providers.openai).toEqual({
      apiKey: ph('OPENAI_API_KEY'),
      baseUrl: 'https://api',
    });
    expect(parsed.models.providers.anthropic.apiKey).toBe(ph('ANTHROPIC_API_KEY'));
    expect(parsed.gateway.auth).toEqual({ token: ph('AUTH_TOKEN') });
    expect(parsed.note).toBe('keep me');
    const keys = out.credentials.map((c) => c.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toEqual(
      expect.arrayContaining(['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'AUTH_TOKEN']),
    );
    for (const c of out.credentials) {
      const line = Number(c.locations[0]?.split(':')[1]);
      expect(out.text.split('\n')[line - 1]).toContain(ph(c.key));
    }
    expect(out.text).not.toMatch(/sk-1|sk-2|"tok"|b1|b2/);
  });

  it('leaves a file that is not JSON alone', () => {
    expect(stripOpenclawJson('x', '{ apiKey: nope')).toEqual({
      text: '{ apiKey: nope',
      credentials: [],
    });
  });

  it('merges one key found in two files', () => {
    const a = { key: 'K', description: 'a', locations: ['a:1'] };
    const b = { key: 'K', description: 'b', locations: ['b:2'] };
    expect(mergeCredentials([[a], [b]])).toEqual([
      { key: 'K', description: 'a', locations: ['a:1', 'b:2'] },
    ]);
  });
});
