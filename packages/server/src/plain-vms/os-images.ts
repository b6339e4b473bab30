import { OS_IMAGES } from '@svc/contract';
import type { ComputeDriver } from '../adapters/compute/compute-driver.js';
import type { Logger } from '../logger.js';

/**
 * The OS images a Plain VM can run, each with whether the driver has it now (asked each time: an
 * operator may import one while the service runs). A driver that cannot say boots them all; one
 * that fails to say (its daemon or API unreachable) boots none for now: the list still answers,
 * with nothing offered, since a VM created meanwhile could not start either.
 */
export async function listOsImages(compute: ComputeDriver, log: Logger) {
  const keys = OS_IMAGES.map((image) => image.key);
  const bootable: ReadonlySet<string> = await Promise.resolve(compute.bootableImages?.(keys)).then(
    (images) => images ?? new Set(keys),
    (err: unknown) => {
      log.warn({ err }, 'the compute driver cannot list its OS images now: none offered');
      return new Set<string>();
    },
  );
  return OS_IMAGES.map((image) => ({ ...image, available: bootable.has(image.key) }));
}
