import type { AdoptedFrom, AgentSource, BundleCredential } from '@svc/contract';
import type { ObjectStore } from '../adapters/object-store/object-store.js';
import type { TokenCipher } from '../crypto/token-cipher.js';
import type { Database, Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import { type AdoptingAgent, withHomeSeed } from './adoption-seed.js';
import * as repo from './bundles.repo.js';

/** What a new Agent records about the bundle it adopts, decided when it is created. */
export interface Adoption {
  readonly adoptedVersionId: string;
  readonly adoptedFrom: AdoptedFrom;
  /** The adopter's credential values, sealed for this Agent only. */
  readonly adoptionCredentials: string | null;
  readonly credentialsToSet: string[];
}

export interface AdoptionDeps {
  readonly database: Database;
  readonly store: ObjectStore;
  /** Seals the adopter's credentials until provisioning writes them into the home. */
  readonly cipher: TokenCipher;
}

/** Sealed credentials open only for the Agent they were given for. */
const credentialsBinding = (agentId: string) => ({ connectionId: agentId, provider: 'adoption' });

/**
 * Adopting a published bundle into a new Agent, as the Agents feature uses it: what the new Agent
 * records, the home its machine starts from, and the bundle's adoption count.
 */
export function createAdoptionService(deps: AdoptionDeps) {
  const { cipher } = deps;
  const openCredentials = (agentId: string, sealed: string): Record<string, string> =>
    JSON.parse(cipher.open(sealed, credentialsBinding(agentId)));

  return {
    /**
     * The version a `source` names (the latest when it names none) and what the new Agent keeps
     * of it. A bundle or version that does not exist, or no longer does, is `not_found`; a
     * credential the version's manifest does not name is refused, so a typo is not dropped.
     */
    async resolve(tx: Executor, agentId: string, source: AgentSource): Promise<Adoption> {
      const [accountSlug = '', name = ''] = source.bundle.split('/');
      const bundle = await repo.findBundleByAddress(tx, accountSlug, name);
      const wanted = source.version ?? bundle?.latestVersion;
      const version =
        bundle && wanted != null
          ? (await repo.listVersions(tx, bundle.id)).find((v) => v.version === wanted)
          : undefined;
      if (!bundle || !version) {
        throw new AppError('not_found', {
          message: source.version
            ? `No version ${source.version} of ${source.bundle}`
            : `No published bundle ${source.bundle}`,
        });
      }
      const given = Object.fromEntries(
        Object.entries(source.credentials ?? {}).filter(([, value]) => value !== ''),
      );
      const declared: readonly BundleCredential[] = version.manifest.credentials;
      const unknown = Object.keys(given).filter((key) => !declared.some((c) => c.key === key));
      if (unknown.length > 0) {
        throw new AppError('invalid_request', {
          message: `${source.bundle} version ${version.version} names no credential ${unknown.join(', ')}`,
          issues: unknown.map((key) => ({
            path: ['source', 'credentials', key],
            message: 'Not a credential of this bundle version',
            code: 'unknown_credential',
          })),
        });
      }
      const sealed =
        Object.keys(given).length > 0
          ? cipher.seal(JSON.stringify(given), credentialsBinding(agentId))
          : null;
      return {
        adoptedVersionId: version.id,
        adoptedFrom: { bundle: `${bundle.accountSlug}/${bundle.name}`, version: version.version },
        adoptionCredentials: sealed,
        credentialsToSet: declared.map((c) => c.key).filter((key) => !(key in given)),
      };
    },

    /** Runs `use` with the tree an adopting Agent's home starts from (see `withHomeSeed`). */
    withHomeSeed<T>(agent: AdoptingAgent, use: (seedDir: string | undefined) => Promise<T>) {
      return withHomeSeed({ db: deps.database.db, store: deps.store, openCredentials }, agent, use);
    },

    /** One more adoption of the bundle the version belongs to (the adopter is not recorded). */
    counted: (tx: Executor, versionId: string) => repo.countAdoption(tx, versionId),
  };
}

export type AdoptionService = ReturnType<typeof createAdoptionService>;
