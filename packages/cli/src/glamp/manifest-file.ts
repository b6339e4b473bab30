import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BundleManifest, MANIFEST_FILE } from '@svc/contract';

export class ManifestError extends Error {
  override name = 'ManifestError';
}

/** Each problem on its own line, naming the field: `name: Use kebab-case…`. */
export function describeIssues(
  issues: readonly { path: PropertyKey[]; message: string }[],
): string {
  return issues
    .map((i) => `  - ${i.path.map(String).join('.') || '(manifest)'}: ${i.message}`)
    .join('\n');
}

export function validateManifest(value: unknown): BundleManifest {
  const parsed = BundleManifest.safeParse(value);
  if (!parsed.success) {
    throw new ManifestError(
      `${MANIFEST_FILE} is not valid:\n${describeIssues(parsed.error.issues)}`,
    );
  }
  return parsed.data;
}

export async function readManifest(dir: string): Promise<BundleManifest> {
  const file = path.join(dir, MANIFEST_FILE);
  const text = await readFile(file, 'utf8').catch(() => {
    throw new ManifestError(`no ${MANIFEST_FILE} in ${dir}: run "svc glamp init" first`);
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ManifestError(`${MANIFEST_FILE} is not valid JSON`);
  }
  return validateManifest(value);
}

/** bundle.json's bytes, as `init` and `stage` write them. */
export const manifestText = (manifest: BundleManifest) => `${JSON.stringify(manifest, null, 2)}\n`;

export async function writeManifest(dir: string, manifest: BundleManifest): Promise<void> {
  await writeFile(path.join(dir, MANIFEST_FILE), manifestText(manifest));
}
