import { describe, expect, it } from 'vitest';
import { renderToolsMd } from './tools-md.js';

describe('renderToolsMd', () => {
  const none = { providers: [], connections: [] };

  it("lists an adopted bundle's credentials still to set, and where they go", () => {
    const text = renderToolsMd({
      ...none,
      adoptedFrom: { bundle: 'ada/helper', version: 3 },
      credentialsToSet: ['OPENAI_API_KEY', 'SLACK_TOKEN'],
    });
    expect(text).toContain('## Credentials to set');
    expect(text).toContain('adopted from ada/helper (version 3)');
    expect(text).toContain('`~/.openclaw/.env`');
    expect(text).toContain('- `OPENAI_API_KEY`: to set\n- `SLACK_TOKEN`: to set\n');
  });

  it('says nothing of credentials when none are left or nothing was adopted', () => {
    const adopted = { bundle: 'ada/helper', version: 1 };
    for (const info of [
      { ...none, adoptedFrom: adopted, credentialsToSet: [] },
      { ...none, adoptedFrom: null, credentialsToSet: ['X'] },
      none,
    ]) {
      expect(renderToolsMd(info)).not.toContain('Credentials to set');
    }
  });
});
