import { access } from 'node:fs/promises';
import path from 'node:path';
import { BundleManifest, MANIFEST_FILE } from '@svc/contract';
import { requireHome } from '../../agent-env.js';
import { ManifestError, validateManifest, writeManifest } from '../../glamp/manifest-file.js';
import type { CliIo } from '../../main.js';
import type { CliCommand } from '../index.js';

/** `svc glamp init`. */
export const glampInitCommand: CliCommand = {
  register(glamp, io) {
    glamp
      .command('init')
      .description('Write a starter bundle.json (asks for what the flags do not give)')
      .option('--name <name>', 'kebab-case, at most 50 characters')
      .option('--display-name <text>', 'shown on the public page')
      .option('--description <text>', 'one sentence')
      .option('--tags <list>', 'comma-separated, kebab-case')
      .option('--force', 'overwrite an existing bundle.json')
      .action((options: InitOptions) => glampInit(io, requireHome(io.env), options));
  },
};

interface InitOptions {
  name?: string;
  displayName?: string;
  description?: string;
  tags?: string;
  force?: boolean;
}

/** A person who answered this many times and still not validly is told what to pass instead. */
const MAX_ATTEMPTS = 5;
const fields = BundleManifest.shape;

/** `Weather Bot` → `weather-bot`: the name a display name suggests (empty when none fits). */
export function kebabCase(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50)
    .replace(/-+$/, '');
}

const splitTags = (text: string) =>
  text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);

/**
 * Asks for (or takes flags for) the four fields and writes `bundle.json`. Each answer typed is
 * checked at once and asked again with the reason; flags are checked together at the end.
 */
async function glampInit(io: CliIo, home: string, options: InitOptions): Promise<void> {
  const file = path.join(home, MANIFEST_FILE);
  const exists = await access(file).then(
    () => true,
    () => false,
  );
  if (exists && !options.force) {
    throw new ManifestError(`${MANIFEST_FILE} exists already; pass --force to overwrite it`);
  }
  const ask = async (
    value: string | undefined,
    question: string,
    flag: string,
    check: (answer: string) => string | undefined,
    proposal?: string,
  ) => {
    if (value !== undefined) return value;
    const { prompt } = io;
    if (!prompt) throw new ManifestError(`missing ${flag} (no terminal to ask on)`);
    const asked = proposal ? question.replace(/: $/, ` [${proposal}]: `) : question;
    for (let attempt = 1; ; attempt++) {
      const typed = (await prompt(asked)).trim();
      const answer = typed === '' && proposal ? proposal : typed;
      const problem = check(answer);
      if (!problem) return answer;
      io.stderr.write(`  ${problem}\n`);
      if (attempt >= MAX_ATTEMPTS) {
        throw new ManifestError(`no valid answer for ${flag} (${problem}): pass it as ${flag}`);
      }
    }
  };
  const firstIssue = (result: { success: boolean; error?: { issues: { message: string }[] } }) =>
    result.success ? undefined : result.error?.issues[0]?.message;
  const displayName = await ask(options.displayName, 'Display name: ', '--display-name', (answer) =>
    firstIssue(fields.displayName.safeParse(answer)),
  );
  const name = await ask(
    options.name,
    'Name (kebab-case, at most 50 characters): ',
    '--name',
    (answer) => firstIssue(fields.name.safeParse(answer)),
    kebabCase(displayName) || undefined,
  );
  const description = await ask(
    options.description,
    'Description (one sentence): ',
    '--description',
    (answer) => firstIssue(fields.description.safeParse(answer)),
  );
  const tags = await ask(
    options.tags,
    'Tags (comma-separated, kebab-case): ',
    '--tags',
    (answer) => {
      const parsed = fields.tags.safeParse(splitTags(answer));
      if (parsed.success) return undefined;
      const issue = parsed.error.issues[0];
      const index = issue?.path[0];
      const tag = typeof index === 'number' ? splitTags(answer)[index] : undefined;
      return tag === undefined ? issue?.message : `"${tag}": ${issue?.message}`;
    },
  );
  const manifest = validateManifest({
    name,
    displayName,
    description,
    tags: splitTags(tags),
    glampId: '',
    credentials: [],
  });
  await writeManifest(home, manifest);
  io.stdout.write(`Wrote ${file}. Next: svc glamp stage\n`);
}
