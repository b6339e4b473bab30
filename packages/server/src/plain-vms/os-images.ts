import { OS_IMAGES } from '@svc/contract';
import type { ComputeDriver } from '../adapters/compute/compute-driver.js';

/**
 * The OS images a Plain VM can run, each with whether the driver has it now (asked each time: an
 * operator may import one while the service runs). A driver that cannot say boots them all.
 */
export async function listOsImages(compute: ComputeDriver) {
  const keys = OS_IMAGES.map((image) => image.key);
  const bootable: ReadonlySet<string> = (await compute.bootableImages?.(keys)) ?? new Set(keys);
  return OS_IMAGES.map((image) => ({ ...image, available: bootable.has(image.key) }));
}
