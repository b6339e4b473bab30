import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Where `svc onboard` remembers what it last wrote, to tell a user's edits from its own. */
export const ONBOARD_STATE = '.crabglamp/onboard.json';

export type WriteOutcome = 'created' | 'updated' | 'unchanged' | 'kept';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Writes files that `svc onboard` owns until the user edits them: a file is replaced only when
 * it still holds exactly what onboard last wrote there, or when `confirm` says so.
 */
export class ManagedFiles {
  #state: Record<string, string> = {};

  constructor(readonly home: string) {}

  async load(): Promise<void> {
    const text = await readFile(path.join(this.home, ONBOARD_STATE), 'utf8').catch(() => '{}');
    this.#state = JSON.parse(text) as Record<string, string>;
  }

  async write(
    relative: string,
    content: string,
    confirm: (relative: string) => Promise<boolean>,
  ): Promise<WriteOutcome> {
    const file = path.join(this.home, relative);
    const current = await readFile(file, 'utf8').catch(() => undefined);
    if (current === content) {
      this.#state[relative] = sha256(content);
      return 'unchanged';
    }
    const ours = current !== undefined && this.#state[relative] === sha256(current);
    if (current !== undefined && !ours && !(await confirm(relative))) return 'kept';
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
    this.#state[relative] = sha256(content);
    return current === undefined ? 'created' : 'updated';
  }

  async save(): Promise<void> {
    await mkdir(path.join(this.home, '.crabglamp'), { recursive: true });
    await writeFile(
      path.join(this.home, ONBOARD_STATE),
      `${JSON.stringify(this.#state, null, 2)}\n`,
      {
        mode: 0o600,
      },
    );
  }
}
