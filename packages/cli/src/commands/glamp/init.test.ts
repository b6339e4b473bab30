import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../../main.js';
import { kebabCase } from './init.js';

describe('svc glamp init', () => {
  let home = '';
  afterEach(() => rm(home, { recursive: true, force: true }));

  it('asks for what the flags do not give, then refuses to overwrite without --force', async () => {
    home = await mkdtemp(path.join(tmpdir(), 'svc-init-'));
    const questions: string[] = [];
    const answers = ['My Glamp', 'Tools I use every day.', ' demo , tools '];
    const out: string[] = [];
    const err: string[] = [];
    const io = {
      env: { HOME: home },
      stdout: { write: (s: string) => out.push(s) },
      stderr: { write: (s: string) => err.push(s) },
      prompt: async (question: string) => {
        questions.push(question);
        return answers.shift() ?? '';
      },
    };
    expect(await run(['glamp', 'init', '--name', 'my-glamp'], io)).toBe(0);
    expect(questions).toEqual([
      'Display name: ',
      'Description (one sentence): ',
      'Tags (comma-separated, kebab-case): ',
    ]);
    expect(JSON.parse(await readFile(path.join(home, 'bundle.json'), 'utf8'))).toEqual({
      name: 'my-glamp',
      displayName: 'My Glamp',
      description: 'Tools I use every day.',
      tags: ['demo', 'tools'],
      glampId: '',
      credentials: [],
    });
    expect(await run(['glamp', 'init', '--name', 'other'], io)).toBe(1);
    expect(err.join('')).toMatch(/exists already; pass --force/);
  });

  it('checks each answer as it is typed and proposes the kebab-case form of the display name', async () => {
    home = await mkdtemp(path.join(tmpdir(), 'svc-init-'));
    const questions: string[] = [];
    const answers = [
      '',
      'Weather Bot',
      'Weather_Bot!',
      '',
      'Forecasts.',
      'Weather, bots',
      'weather, bots',
    ];
    const out: string[] = [];
    const err: string[] = [];
    const io = {
      env: { HOME: home },
      stdout: { write: (s: string) => out.push(s) },
      stderr: { write: (s: string) => err.push(s) },
      prompt: async (question: string) => {
        questions.push(question);
        return answers.shift() ?? '';
      },
    };
    expect(await run(['glamp', 'init'], io)).toBe(0);
    expect(questions).toEqual([
      'Display name: ',
      'Display name: ',
      'Name (kebab-case, at most 50 characters) [weather-bot]: ',
      'Name (kebab-case, at most 50 characters) [weather-bot]: ',
      'Description (one sentence): ',
      'Tags (comma-separated, kebab-case): ',
      'Tags (comma-separated, kebab-case): ',
    ]);
    expect(err.join('')).toBe(
      '  Give the bundle a display name\n' +
        '  Use kebab-case: lower-case letters, digits and single inner hyphens\n' +
        '  "Weather": Tags are kebab-case: lower-case letters, digits and single inner hyphens\n',
    );
    expect(JSON.parse(await readFile(path.join(home, 'bundle.json'), 'utf8'))).toMatchObject({
      name: 'weather-bot',
      displayName: 'Weather Bot',
      description: 'Forecasts.',
      tags: ['weather', 'bots'],
    });
  });

  it('gives up after five wrong answers, naming the flag to pass instead', async () => {
    home = await mkdtemp(path.join(tmpdir(), 'svc-init-'));
    const err: string[] = [];
    const io = {
      env: { HOME: home },
      stdout: { write: () => {} },
      stderr: { write: (s: string) => err.push(s) },
      prompt: async () => '',
    };
    expect(await run(['glamp', 'init', '--name', 'x'], io)).toBe(1);
    expect(err.join('')).toMatch(
      /svc: no valid answer for --display-name .*: pass it as --display-name/,
    );
  });

  it('turns display names into kebab-case names', () => {
    expect(kebabCase('Weather Bot')).toBe('weather-bot');
    expect(kebabCase('  Café -- Crème 2!  ')).toBe('cafe-creme-2');
    expect(kebabCase('!!!')).toBe('');
    expect(kebabCase(`${'a'.repeat(49)} b`)).toBe('a'.repeat(49));
  });

  it('names every invalid field at once, and asks nothing without a terminal', async () => {
    home = await mkdtemp(path.join(tmpdir(), 'svc-init-'));
    const err: string[] = [];
    const io = {
      env: { HOME: home },
      stdout: { write: () => {} },
      stderr: { write: (s: string) => err.push(s) },
    };
    const long = 'a'.repeat(51);
    expect(
      await run(
        [
          'glamp',
          'init',
          '--name',
          long,
          '--display-name',
          ' ',
          '--description',
          'x',
          '--tags',
          'Bad,ok',
        ],
        io,
      ),
    ).toBe(1);
    expect(err.join('')).toMatch(/name: Use at most 50 characters/);
    expect(err.join('')).toMatch(/displayName: Give the bundle a display name/);
    expect(err.join('')).toMatch(/tags\.0: Tags are kebab-case/);
    err.length = 0;
    expect(await run(['glamp', 'init', '--name', 'x'], io)).toBe(1);
    expect(err.join('')).toMatch(/missing --display-name \(no terminal to ask on\)/);
  });
});
