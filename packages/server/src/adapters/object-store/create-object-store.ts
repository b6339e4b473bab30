import type { ObjectStoreConfig } from '../../config/config.js';
import type { Clock } from '../clock.js';
import { FsObjectStore } from './fs-object-store.js';
import type { ObjectStore } from './object-store.js';
import { S3ObjectStore } from './s3-object-store.js';

/** The configured driver: `fs` (embedded default) or `s3`. */
export function createObjectStore(
  config: ObjectStoreConfig,
  deps: {
    publicUrl: string;
    hmacKey: Buffer;
    clock: Clock;
    s3Credentials?: { accessKeyId: string; secretAccessKey: string };
  },
): ObjectStore {
  if (config.kind === 'fs') {
    return new FsObjectStore(config.root, deps.publicUrl, deps.hmacKey, deps.clock);
  }
  return new S3ObjectStore(
    {
      bucket: config.bucket,
      region: config.region,
      forcePathStyle: config.forcePathStyle,
      ...(config.endpoint && { endpoint: config.endpoint }),
      ...(deps.s3Credentials && { credentials: deps.s3Credentials }),
    },
    deps.clock,
  );
}
