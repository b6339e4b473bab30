import type { Hono } from 'hono';
import { AppError } from '../../errors.js';
import type { AppEnv } from '../../http/app-env.js';
import { wellFormedText } from '../../http/well-formed-text.js';
import { FS_UPLOAD_PATH, type FsObjectStore } from './fs-object-store.js';

/**
 * The fs store's upload endpoint: the signed URL is the credential, the body is raw bytes (so it
 * is not a contract endpoint and the 1 MiB JSON body limit does not apply). A bad or expired URL
 * is 403; bytes other than the signed size and SHA-256 are 400 and stored nowhere.
 */
export function mountFsUploads(app: Hono<AppEnv>, store: FsObjectStore): void {
  app.put(`${FS_UPLOAD_PATH}/:uploadId`, wellFormedText, async (c) => {
    const result = await store.receive(c.req.param('uploadId'), c.req.query(), c.req.raw.body);
    if (result === 'forbidden') throw new AppError('forbidden', { message: 'bad upload URL' });
    if (result === 'mismatch')
      throw new AppError('upload_invalid', { message: 'upload bytes differ' });
    return c.body(null, 200);
  });
}
