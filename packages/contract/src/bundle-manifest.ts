import { z } from 'zod';

/** The compressed tarball's cap: 500 MB, decimal (docs/reference.md#bundles). */
export const MAX_TARBALL_BYTES = 500 * 1000 * 1000;

/** The manifest's file name in the Agent's home, and the ignore file's name. */
export const MANIFEST_FILE = 'bundle.json';
export const IGNORE_FILE = '.bundleignore';

/** Where `stage` builds the staging tree, relative to the home directory. */
export const STAGING_DIR = '.crabglamp/glamp-staging';

/**
 * Excluded whatever `.bundleignore` says (docs/reference.md#bundles), as gitignore lines: they are appended
 * after every user rule so no `!` can bring them back.
 */
export const ALWAYS_EXCLUDED: readonly string[] = [
  '.crabglamp/',
  '.ssh/',
  '.gnupg/',
  '.bash_history',
  '.zsh_history',
  'node_modules/',
  '.cache/',
  '.npm/',
];

const KEBAB = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export const BundleName = z
  .string()
  .min(1, 'Give the bundle a name')
  .max(50, 'Use at most 50 characters')
  .regex(KEBAB, 'Use kebab-case: lower-case letters, digits and single inner hyphens');

export const BundleTag = z
  .string()
  .min(1, 'A tag cannot be empty')
  .max(50, 'Use at most 50 characters per tag')
  .regex(KEBAB, 'Tags are kebab-case: lower-case letters, digits and single inner hyphens');

/** One credential an adopter must set: derived from what `stage` stripped, never asked for. */
export const CredentialKey = z
  .string()
  .max(200)
  .regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, 'A credential key is a variable name');

export const BundleCredential = z.object({
  key: CredentialKey,
  description: z.string().max(500),
  /** `path:line` of every place the value was replaced by a placeholder. */
  locations: z.array(z.string().max(1000)).max(1000),
});
export type BundleCredential = z.infer<typeof BundleCredential>;

/** A published bundle's address: `accountSlug/name`. */
export const BundleAddress = z
  .string()
  .max(100)
  .regex(
    /^[a-z0-9]+(?:-[a-z0-9]+)*\/[a-z0-9]+(?:-[a-z0-9]+)*$/,
    'Name the bundle as accountSlug/name',
  );

/** Where an adopted Agent's home came from. */
export const AdoptedFrom = z.strictObject({
  bundle: BundleAddress,
  version: z.number().int().positive(),
});
export type AdoptedFrom = z.infer<typeof AdoptedFrom>;

/**
 * `bundle.json` (docs/reference.md#bundles); `glampId` is empty until the first publish, and in
 * an adopted home, which also says where it came from (`adoptedFrom`).
 */
export const BundleManifest = z.strictObject({
  name: BundleName,
  displayName: z
    .string()
    .trim()
    .min(1, 'Give the bundle a display name')
    .max(100, 'Use at most 100 characters'),
  description: z
    .string()
    .trim()
    .min(1, 'Describe the bundle in one sentence')
    .max(300, 'Keep the description to one sentence (at most 300 characters)'),
  tags: z.array(BundleTag).max(20, 'Use at most 20 tags'),
  glampId: z.union([z.literal(''), z.uuid('glampId must be empty or a UUID')]),
  credentials: z.array(BundleCredential).max(200),
  adoptedFrom: AdoptedFrom.optional(),
});
export type BundleManifest = z.infer<typeof BundleManifest>;
