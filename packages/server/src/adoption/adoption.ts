import type { AdoptedFrom, AgentSource, BundleCredential } from '@svc/contract';
import type { TokenCipher } from '../app-connections/token-cipher.js';
import * as bundles from '../bundles/bundles.repo.js';
import type { Executor } from '../db/database.js';
import { AppError } from '../errors.js';

/** What a new Agent records about the bundle it adopts, decided when it is created. */
export interface Adoption {
  readonly adoptedVersionId: string;
  readonly adoptedFrom: AdoptedFrom;
  /** The adopter's credential values, sealed for this Agent only. */
  readonly adoptionCredentials: string | null;
  readonly credentialsToSet: string[];
}

/** Sealed credentials open only for the Agent they were given for. */
const credentialsBinding = (agentId: string) => ({ connectionId: agentId, provider: 'adoption' });

export const sealCredentials = (
  cipher: TokenCipher,
  agentId: string,
  values: Readonly<Record<string, string>>,
) => cipher.seal(JSON.stringify(values), credentialsBinding(agentId));

export const openCredentials = (
  cipher: TokenCipher,
  agentId: string,
  sealed: string,
): Record<string, string> => JSON.parse(cipher.open(sealed, credentialsBinding(agentId)));

/**
 * The version a `source` names (the latest when it names none) and what the new Agent keeps of
 * it. A bundle or version that does not exist, or no longer does, is `not_found`; a credential
 * the version's manifest does not name is refused, so a typo is not silently dropped.
 */
export async function resolveAdoption(
  tx: Executor,
  cipher: TokenCipher,
  agentId: string,
  source: AgentSource,
): Promise<Adoption> {
  const [accountSlug = '', name = ''] = source.bundle.split('/');
  const bundle = await bundles.findBundleByAddress(tx, accountSlug, name);
  const wanted = source.version ?? bundle?.latestVersion;
  const version =
    bundle && wanted != null
      ? (await bundles.listVersions(tx, bundle.id)).find((v) => v.version === wanted)
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
  return {
    adoptedVersionId: version.id,
    adoptedFrom: { bundle: `${bundle.accountSlug}/${bundle.name}`, version: version.version },
    adoptionCredentials:
      Object.keys(given).length > 0 ? sealCredentials(cipher, agentId, given) : null,
    credentialsToSet: declared.map((c) => c.key).filter((key) => !(key in given)),
  };
}
