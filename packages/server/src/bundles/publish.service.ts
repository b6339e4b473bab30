import { randomUUID } from 'node:crypto';
import type {
  BundleFile,
  BundleManifest,
  StagingReport,
  Upload,
  ValidationIssue,
} from '@svc/contract';
import type { Clock } from '../adapters/clock.js';
import type { ObjectStore } from '../adapters/object-store/object-store.js';
import { recordAuditEvent } from '../audit/audit.js';
import type { BundleLimits } from '../config/config.js';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import type { AgentPrincipal } from '../http/app-env.js';
import type { Metrics } from '../metrics/metrics.js';
import { bundleUrl, toStaging } from './bundle-views.js';
import * as repo from './bundles.repo.js';
import { refreshPublished } from './search.repo.js';
import * as stagings from './stagings.repo.js';
import { verifyObjects } from './verify-objects.js';
import { verifyTarball } from './verify-tarball.js';

/** How long upload URLs stay valid. */
export const UPLOAD_TTL_MS = 60 * 60 * 1000;

const invalid = (path: (string | number)[], message: string) =>
  new AppError('invalid_request', { issues: [{ path, message, code: 'custom' }] });

/**
 * Two files with one path would make the version ambiguous; a file over the size limit, or
 * files that add up to more than the total, are refused before any upload URL exists (the
 * upload URLs only accept the declared sizes, so the limits bound what is stored).
 */
function checkFiles(files: readonly BundleFile[], limits: BundleLimits, at: (string | number)[]) {
  const seen = new Set<string>();
  let total = 0;
  for (const [index, file] of files.entries()) {
    if (seen.has(file.path)) throw invalid([...at, index, 'path'], 'Duplicate path');
    seen.add(file.path);
    if (file.size > limits.maxFileBytes) {
      throw invalid(
        [...at, index, 'size'],
        `A file may have at most ${limits.maxFileBytes} bytes; ${file.path} has ${file.size}`,
      );
    }
    total += file.size;
  }
  if (total > limits.maxTotalBytes) {
    throw invalid(
      at,
      `The files may add up to at most ${limits.maxTotalBytes} bytes, not ${total}`,
    );
  }
}

/**
 * Stagings, publish and complete: the Agent side of bundles. Every call acts for the Agent's
 * own account only; another Agent's staging or another account's bundle is `not_found`.
 */
export function createPublishService(deps: {
  database: Database;
  clock: Clock;
  store: ObjectStore;
  publicUrl: string;
  limits: BundleLimits;
  metrics: Pick<Metrics, 'bundlePublished'>;
}) {
  const { database, clock, store, publicUrl, limits } = deps;

  return {
    async createStaging(
      agent: AgentPrincipal,
      input: { manifest: BundleManifest; report: StagingReport },
    ) {
      checkFiles(input.report.files, limits, ['body', 'report', 'files']);
      return database.transaction(async (tx) => {
        // One open staging per Agent: a new `stage` replaces the open one, and concurrent
        // stages of one Agent replace each other in turn, the last to commit staying open.
        await stagings.lockAgentStagings(tx, agent.agentId);
        // Read after the wait, so a replaced staging never looks newer than its replacement.
        const at = clock.now();
        await stagings.cancelOpenStagings(tx, agent.agentId, at);
        const row = await stagings.insertStaging(tx, { id: randomUUID(), ...agent, ...input, at });
        return toStaging(row);
      });
    },

    async cancelStaging(agent: AgentPrincipal, stagingId: string): Promise<void> {
      await database.transaction(async (tx) => {
        const staging = await stagings.findStaging(tx, stagingId, agent.agentId, true);
        if (!staging) throw new AppError('not_found');
        const moved = await stagings.moveStaging(tx, stagingId, ['staged', 'publishing'], {
          state: 'cancelled',
          at: clock.now(),
        });
        if (!moved) {
          throw new AppError('invalid_state', {
            message: `cannot cancel a staging that is ${staging.state}`,
          });
        }
      });
    },

    async status(agent: AgentPrincipal) {
      const staging = await stagings.findOpenStaging(database.db, agent.agentId);
      const bundles = await repo.listPublishedBundles(database.db, agent.accountId);
      return {
        staging: staging ? toStaging(staging) : null,
        bundles: bundles.map((b) => ({
          id: b.id,
          accountSlug: b.accountSlug,
          name: b.name,
          displayName: b.displayName,
          latestVersion: b.latestVersion,
          url: bundleUrl(publicUrl, b.accountSlug, b.name),
        })),
      };
    },

    /** Records what will be published and hands out upload URLs for the objects the store lacks. */
    async publish(
      agent: AgentPrincipal,
      slug: string,
      input: {
        stagingId: string;
        manifest: BundleManifest;
        files: BundleFile[];
        tarball: { size: number; sha256: string };
      },
    ): Promise<{ bundleId: string; uploads: Upload[]; expiresAt: string }> {
      checkFiles(input.files, limits, ['body', 'files']);
      const at = clock.now();
      const expiresAt = new Date(at.getTime() + UPLOAD_TTL_MS);
      const { bundleId, tickets } = await database.transaction(async (tx) => {
        const staging = await stagings.findStaging(tx, input.stagingId, agent.agentId, true);
        if (!staging) throw new AppError('not_found');
        if (staging.state !== 'staged' && staging.state !== 'publishing') {
          // A newer `stage` cancels the open staging, so this is usually an older shell's.
          throw new AppError('invalid_state', {
            message: `cannot publish a staging that is ${staging.state}: stage again`,
          });
        }
        const bundle =
          slug === 'new'
            ? await firstPublishBundle(tx, agent.accountId, input.manifest, at)
            : await repo.findBundleById(tx, slug);
        // A deleted bundle, or another account's, does not exist for this Agent.
        if (!bundle || bundle.accountId !== agent.accountId) throw new AppError('not_found');
        if (bundle.name !== input.manifest.name) {
          throw invalid(
            ['body', 'manifest', 'name'],
            `The bundle is named "${bundle.name}"; a name cannot change`,
          );
        }
        const manifest = { ...input.manifest, glampId: bundle.id };
        await stagings.moveStaging(tx, staging.id, ['staged', 'publishing'], {
          state: 'publishing',
          at,
          bundleId: bundle.id,
          publish: { manifest, files: input.files, tarball: input.tarball },
        });
        const wanted = new Map<string, number>();
        for (const object of [...input.files, input.tarball])
          wanted.set(object.sha256, object.size);
        const inUse = await repo.objectsInUse(tx, [...wanted.keys()]);
        const tickets = [...wanted]
          .filter(([sha256]) => !inUse.has(sha256))
          .map(([sha256, size]) => ({
            id: randomUUID(),
            stagingId: staging.id,
            sha256,
            size,
            expiresAt,
          }));
        await stagings.replaceUploads(tx, staging.id, tickets);
        return { bundleId: bundle.id, tickets };
      });
      const uploads = await Promise.all(
        tickets.map(async (t) => {
          const target = await store.uploadUrl({
            uploadId: t.id,
            sha256: t.sha256,
            size: t.size,
            expiresAt,
          });
          return { sha256: t.sha256, size: t.size, method: 'PUT' as const, ...target };
        }),
      );
      return { bundleId, uploads, expiresAt: expiresAt.toISOString() };
    },

    /**
     * Verifies every declared object and the tarball's contents, then takes the next version number and makes the version
     * public in one transaction. Nothing is numbered before the check passes, so a failed or
     * abandoned publish leaves no gap.
     */
    async complete(agent: AgentPrincipal, bundleId: string, stagingId: string) {
      const staging = await stagings.findStaging(database.db, stagingId, agent.agentId);
      if (!staging) throw new AppError('not_found');
      if (staging.state !== 'publishing' || !staging.publish) throw cannotComplete(staging.state);
      if (staging.bundleId !== bundleId) throw new AppError('not_found');
      const declared = staging.publish;
      const uploads = await stagings.listUploads(database.db, stagingId);
      const issues: ValidationIssue[] = await verifyObjects(store, declared, uploads);
      if (issues.length > 0) throw new AppError('upload_invalid', { issues });
      // The hash proves the bytes arrived intact, not what they hold: the tarball must be
      // exactly the declared files, or its download would carry links, `..` paths or extras.
      const tarball = await store.read(declared.tarball.sha256);
      if (!tarball) {
        throw new AppError('upload_invalid', {
          issues: [
            { path: ['tarball'], message: 'The object was not uploaded', code: 'missing_upload' },
          ],
        });
      }
      const tarballIssues = await verifyTarball(tarball, declared.files);
      if (tarballIssues.length > 0) throw new AppError('upload_invalid', { issues: tarballIssues });

      const published = await database.transaction(async (tx) => {
        const at = clock.now();
        const locked = await stagings.findStaging(tx, stagingId, agent.agentId, true);
        // Cancelled, or completed by a concurrent call, since the check above.
        if (locked?.state !== 'publishing') throw cannotComplete(locked?.state ?? 'gone');
        const bundle = await repo.findBundleById(tx, bundleId);
        if (!bundle || bundle.accountId !== agent.accountId) throw new AppError('not_found');
        const taken = await repo.takeNextVersion(tx, bundleId, declared.manifest, at);
        if (!taken) throw new AppError('not_found');
        const readme = declared.files.find((f) => f.path === 'README.md');
        await repo.insertVersion(
          tx,
          {
            id: randomUUID(),
            bundleId,
            version: taken.lastVersion,
            manifest: JSON.stringify(declared.manifest),
            tarballSha256: declared.tarball.sha256,
            tarballSize: declared.tarball.size,
            fileCount: declared.files.length,
            totalBytes: declared.files.reduce((sum, f) => sum + f.size, 0),
            readmeSha256: readme?.sha256 ?? null,
            agentId: agent.agentId,
            createdAt: at,
          },
          declared.files,
        );
        await refreshPublished(tx, bundleId);
        // An Agent published it: no user acted, the Agent is named in the event.
        await recordAuditEvent(
          tx,
          {
            accountId: agent.accountId,
            actorUserId: null,
            action: 'bundle.publish',
            resourceKind: 'bundle',
            resourceId: bundleId,
            data: { name: bundle.name, version: taken.lastVersion, agentId: agent.agentId },
          },
          at,
        );
        await stagings.moveStaging(tx, stagingId, ['publishing'], { state: 'published', at });
        await stagings.replaceUploads(tx, stagingId, []);
        const account = await repo.findBundleAddress(tx, bundleId);
        return {
          bundleId,
          version: taken.lastVersion,
          url: bundleUrl(publicUrl, account.accountSlug, bundle.name),
        };
      });
      // Counted once committed: a rolled-back complete published nothing.
      deps.metrics.bundlePublished();
      return published;
    },
  };
}

/** The public reason a complete is refused: the staging is not (or no longer) publishing. */
function cannotComplete(state: string): AppError {
  return new AppError('invalid_state', { message: `cannot complete a staging that is ${state}` });
}

/** `new`: creates the bundle, or takes over one whose first publish never completed. */
async function firstPublishBundle(
  tx: Parameters<typeof repo.findBundleById>[0],
  accountId: string,
  manifest: BundleManifest,
  at: Date,
) {
  const existing = await repo.findBundleByName(tx, accountId, manifest.name);
  if (existing) {
    if (existing.lastVersion > 0) throw new AppError('bundle_name_taken');
    return existing;
  }
  const created = await repo.insertBundle(tx, { id: randomUUID(), accountId, manifest, at });
  // A concurrent first publish of the same name won the insert.
  if (!created) throw new AppError('bundle_name_taken');
  return created;
}

export type PublishService = ReturnType<typeof createPublishService>;
