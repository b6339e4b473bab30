import type { IncusClient } from './incus-client.js';

/**
 * Which of these image keys the project can boot: those with an image alias of that name, as
 * `incus:setup` and `npm run admin -- images build|sync` import them. One listing per call, so
 * an image an operator imports or deletes counts at once.
 */
export async function bootableImages(
  client: IncusClient,
  keys: readonly string[],
): Promise<ReadonlySet<string>> {
  const urls = await client.call<string[]>('GET', '/1.0/images/aliases');
  const aliases = new Set(
    urls.map((url) => decodeURIComponent(url.slice(url.lastIndexOf('/') + 1).split('?')[0] ?? '')),
  );
  return new Set(keys.filter((key) => aliases.has(key)));
}
