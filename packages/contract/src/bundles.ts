import { z } from 'zod';
import {
  BundleCredential,
  BundleManifest,
  BundleName,
  BundleTag,
  MAX_TARBALL_BYTES,
} from './bundle-manifest.js';
import { Id, SLUG_PATTERN, Slug, Timestamp } from './common.js';
import { defineEndpoint } from './endpoint.js';

export const Sha256Hex = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'A SHA-256 is 64 lower-case hex digits');

/** A path inside the staging tree: relative, `/`-separated, no `.`/`..` segments. */
export const BundlePath = z
  .string()
  .min(1)
  .max(1024)
  .refine(
    (p) => !p.startsWith('/') && p.split('/').every((s) => s !== '' && s !== '.' && s !== '..'),
    'A file path is relative, without empty, `.` or `..` segments',
  );

export const BundleFile = z.object({
  path: BundlePath,
  size: z.number().int().nonnegative(),
  sha256: Sha256Hex,
});
export type BundleFile = z.infer<typeof BundleFile>;

export const Tarball = z.object({
  size: z.number().int().positive().max(MAX_TARBALL_BYTES, 'The compressed tarball exceeds 500 MB'),
  sha256: Sha256Hex,
});

/** A scanner finding: where and which rule, never the secret itself. */
export const ScanFlag = z.object({
  file: BundlePath,
  line: z.number().int().positive(),
  rule: z.string().max(100),
  /** Stable identity across rescans (rule, file, hash of the match); not reversible to the value. */
  fingerprint: z.string().max(100),
});
export type ScanFlag = z.infer<typeof ScanFlag>;

export const StagingReport = z.object({
  fileCount: z.number().int().nonnegative(),
  totalBytes: z.number().int().nonnegative(),
  byExtension: z.array(
    z.object({ extension: z.string().max(100), count: z.number().int(), bytes: z.number().int() }),
  ),
  flags: z.array(ScanFlag).max(10_000),
  credentials: z.array(BundleCredential),
  files: z.array(BundleFile).max(200_000),
  tarball: Tarball,
});
export type StagingReport = z.infer<typeof StagingReport>;

export const StagingState = z.enum(['staged', 'publishing', 'published', 'cancelled']);
export type StagingState = z.infer<typeof StagingState>;

export const Staging = z.object({
  id: Id,
  agentId: Id,
  state: StagingState,
  manifest: BundleManifest,
  report: StagingReport,
  bundleId: Id.nullable(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Staging = z.infer<typeof Staging>;

export const BundleVersion = z.object({
  version: z.number().int().positive(),
  fileCount: z.number().int(),
  totalBytes: z.number().int(),
  tarball: Tarball,
  createdAt: Timestamp,
});

export const BundleSummary = z.object({
  id: Id,
  accountSlug: Slug,
  name: BundleName,
  displayName: z.string(),
  latestVersion: z.number().int().nullable(),
  url: z.url(),
});
export type BundleSummary = z.infer<typeof BundleSummary>;

export const BundleDetail = BundleSummary.extend({
  description: z.string(),
  tags: z.array(z.string()),
  credentials: z.array(BundleCredential),
  versions: z.array(BundleVersion),
});
export type BundleDetail = z.infer<typeof BundleDetail>;

export const Upload = z.object({
  sha256: Sha256Hex,
  size: z.number().int().nonnegative(),
  url: z.url(),
  method: z.literal('PUT'),
  /** Headers the upload must carry exactly (S3 signs some of them). */
  headers: z.record(z.string(), z.string()),
});
export type Upload = z.infer<typeof Upload>;

/** `new` on a first publish, else the bundle's id (`glampId`). */
const PublishSlug = z.object({ slug: z.union([z.literal('new'), Id]) });
const BundlePathParams = z.object({ accountSlug: z.string().max(40), name: z.string().max(50) });

export const createStaging = defineEndpoint({
  id: 'createStaging',
  method: 'POST',
  path: '/api/glamps/stagings',
  auth: 'agent',
  tag: 'bundles',
  summary: "Record a staging report; replaces the Agent's open staging.",
  body: z.object({ manifest: BundleManifest, report: StagingReport }),
  response: { status: 201, body: Staging },
  errors: [],
});

export const cancelStaging = defineEndpoint({
  id: 'cancelStaging',
  method: 'DELETE',
  path: '/api/glamps/stagings/{id}',
  auth: 'agent',
  tag: 'bundles',
  summary: 'Cancel a staging that is not published yet.',
  params: z.object({ id: Id }),
  response: { status: 204 },
  errors: ['invalid_state'],
});

export const getGlampStatus = defineEndpoint({
  id: 'getGlampStatus',
  method: 'GET',
  path: '/api/glamps/status',
  auth: 'agent',
  tag: 'bundles',
  summary: "The Agent's open staging, and its account's published bundles.",
  response: {
    status: 200,
    body: z.object({ staging: Staging.nullable(), bundles: z.array(BundleSummary) }),
  },
  errors: [],
});

export const publishBundle = defineEndpoint({
  id: 'publishBundle',
  method: 'POST',
  path: '/api/glamps/{slug}/publish',
  auth: 'agent',
  tag: 'bundles',
  summary: 'Start publishing a staging: upload URLs for every object the store lacks.',
  params: PublishSlug,
  body: z.object({
    stagingId: Id,
    manifest: BundleManifest,
    files: z.array(BundleFile).max(200_000),
    tarball: Tarball,
  }),
  response: {
    status: 200,
    body: z.object({ bundleId: Id, uploads: z.array(Upload), expiresAt: Timestamp }),
  },
  errors: ['invalid_state', 'bundle_name_taken'],
});

export const completePublish = defineEndpoint({
  id: 'completePublish',
  method: 'POST',
  path: '/api/glamps/{slug}/publish/complete',
  auth: 'agent',
  tag: 'bundles',
  summary: 'Verify every object and make the next version public.',
  params: z.object({ slug: Id }),
  body: z.object({ stagingId: Id }),
  response: {
    status: 201,
    body: z.object({ bundleId: Id, version: z.number().int().positive(), url: z.url() }),
  },
  errors: ['invalid_state', 'upload_invalid'],
});

export const getBundle = defineEndpoint({
  id: 'getBundle',
  method: 'GET',
  path: '/api/glamps/{accountSlug}/{name}',
  auth: 'none',
  tag: 'bundles',
  summary: 'A published bundle and its versions, as the public page shows it.',
  params: BundlePathParams,
  response: { status: 200, body: BundleDetail },
  errors: [],
});

export const listAccountBundles = defineEndpoint({
  id: 'listAccountBundles',
  method: 'GET',
  path: '/api/accounts/{id}/bundles',
  auth: 'session',
  tag: 'bundles',
  summary:
    "The account's published bundles by name, each with its versions newest first (any member).",
  params: z.object({ id: Id }),
  response: { status: 200, body: z.array(BundleDetail) },
  errors: [],
});

export const deleteBundle = defineEndpoint({
  id: 'deleteBundle',
  method: 'DELETE',
  path: '/api/glamps/{accountSlug}/{name}',
  auth: 'session',
  tag: 'bundles',
  summary: 'Delete a bundle, every version and the objects no other version uses (owner, admin).',
  params: BundlePathParams,
  response: { status: 204 },
  errors: [],
});

export const deleteBundleVersion = defineEndpoint({
  id: 'deleteBundleVersion',
  method: 'DELETE',
  path: '/api/glamps/{accountSlug}/{name}/versions/{version}',
  auth: 'session',
  tag: 'bundles',
  summary: 'Delete one version; its number is never reused (owner, admin).',
  params: BundlePathParams.extend({ version: z.coerce.number().int().positive() }),
  response: { status: 204 },
  errors: [],
});

/** The longest search text `q` takes. */
export const MAX_SEARCH_QUERY_LENGTH = 200;

export const SearchSort = z.enum(['relevance', 'recent', 'adoptions']);
export type SearchSort = z.infer<typeof SearchSort>;

/** The query of a search, shared by `GET /api/glamps` and the `/explore` page. */
export const SearchQuery = z.object({
  /** Words (websearch syntax: quotes, `or`, `-word`); the last one also matches as a prefix. */
  q: z
    .string()
    .max(MAX_SEARCH_QUERY_LENGTH, `Use at most ${MAX_SEARCH_QUERY_LENGTH} characters`)
    .optional(),
  /** Exact tags; repeat the parameter to require several. */
  tag: z.union([BundleTag, z.array(BundleTag).max(10, 'Use at most 10 tags')]).optional(),
  /** An account's slug. */
  account: z.string().regex(SLUG_PATTERN, 'Not an account slug').optional(),
  /** Default: `relevance` with `q`, else `recent` (last published first). */
  sort: SearchSort.optional(),
  /** `nextCursor` of the previous page, with the same q, tags, account and sort. */
  cursor: z.string().max(500).optional(),
  limit: z.coerce.number().int().min(1).max(50).optional(),
});
export type SearchQuery = z.infer<typeof SearchQuery>;

/** A card of a published bundle, as search and the account page list it. */
export const BundleCard = z.object({
  accountSlug: z.string(),
  name: BundleName,
  displayName: z.string(),
  description: z.string(),
  tags: z.array(z.string()),
  latestVersion: z.number().int().positive(),
  lastPublishedAt: Timestamp,
  adoptions: z.number().int().nonnegative(),
  url: z.url(),
});
export type BundleCard = z.infer<typeof BundleCard>;

export const SearchResult = z.object({
  items: z.array(BundleCard),
  /** Pass as `cursor` for the next page; null on the last one. */
  nextCursor: z.string().nullable(),
});
export type SearchResult = z.infer<typeof SearchResult>;

export const searchBundles = defineEndpoint({
  id: 'searchBundles',
  method: 'GET',
  path: '/api/glamps',
  auth: 'none',
  tag: 'bundles',
  summary:
    'Search published bundles by words (name, display name, tags, description), tags and account, a page at a time.',
  query: SearchQuery,
  response: { status: 200, body: SearchResult },
  errors: [],
});

// `stagings` and `status` come first so they are never read as an account slug.
export const bundleEndpoints = [
  searchBundles,
  createStaging,
  cancelStaging,
  getGlampStatus,
  listAccountBundles,
  publishBundle,
  completePublish,
  getBundle,
  deleteBundle,
  deleteBundleVersion,
] as const;
