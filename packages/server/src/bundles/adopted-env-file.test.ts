import { parse } from 'dotenv';
import { describe, expect, it } from 'vitest';
import { setEnvValues } from './adopted-env-file.js';

describe('setEnvValues', () => {
  it("replaces stage's placeholders, keeps other lines and appends keys it lacks", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder `stage` writes
    const text = '# keys\nOPENAI_API_KEY=${OPENAI_API_KEY}\nexport MODEL = gpt\n';
    const out = setEnvValues(text, { OPENAI_API_KEY: 'sk-1', SLACK_TOKEN: 'xoxb-2' });
    expect(out).toBe("# keys\nOPENAI_API_KEY='sk-1'\nexport MODEL = gpt\nSLACK_TOKEN='xoxb-2'\n");
  });

  it('writes values a dotenv reader gets back exactly, whatever quotes they hold', () => {
    const values = {
      A: "it's",
      B: 'say "hi" and it\'s',
      C: 'a`b"c',
      D: '$HOME \\n #not a comment',
      E: '',
    };
    expect(parse(setEnvValues('', values))).toEqual(values);
  });
});
