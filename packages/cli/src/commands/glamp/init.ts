import { access } from 'node:fs/promises';
import path from 'node:path';
import { MANIFEST_FILE } from '@svc/contract';
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

/** Asks for (or takes flags for) the four fields and writes `bundle.json`. */
async function glampInit(io: CliIo, home: string, options: InitOptions): Promise<void> {
  const file = path.join(home, MANIFEST_FILE);
  const exists = await access(file).then(
    () => true,
    () => false,
  );
  if (exists && !options.force) {
    throw new ManifestError(`${MANIFEST_FILE} exists already; pass --force to overwrite it`);
  }
  const ask = async (value: string | undefined, question: string, flag: string) => {
    if (value !== undefined) return value;
    if (!io.prompt) throw new ManifestError(`missing ${flag} (no terminal to ask on)`);
    return (await io.prompt(question)).trim();
  };
  const name = await ask(options.name, 'Name (kebab-case, at most 50 characters): ', '--name');
  const displayName = await ask(options.displayName, 'Display name: ', '--display-name');
  const description = await ask(
    options.description,
    'Description (one sentence): ',
    '--description',
  );
  const tags = await ask(options.tags, 'Tags (comma-separated, kebab-case): ', '--tags');
  const manifest = validateManifest({
    name,
    displayName,
    description,
    tags: tags
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
    glampId: '',
    credentials: [],
  });
  await writeManifest(home, manifest);
  io.stdout.write(`Wrote ${file}. Next: svc glamp stage\n`);
}
