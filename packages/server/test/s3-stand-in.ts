import { unlink } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
// @ts-expect-error: the package ships no types
import S3rver from '@20minutes/s3rver';

export interface S3StandIn {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}

interface FilesystemStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  deleteObject(bucket: string, key: string): Promise<void>;
}

/**
 * s3rver with one bucket, `bundles`, kept in `directory`. S3 has no directories, but s3rver keeps
 * `a/b` as a file in a directory `a/` and, after a delete, removes the directories it left
 * empty: a PUT under the same prefix at that moment (one `uploads/<id>` while another's commit
 * deletes its own) lands in a directory being removed, and its object vanishes after a 200. So
 * deletes here only remove the object's files and leave the directories, as S3 keeps a key's
 * neighbours.
 */
export function s3StandIn(options: { directory: string; port?: number }): S3StandIn {
  const server = new S3rver({
    address: '127.0.0.1',
    port: options.port ?? 0,
    silent: true,
    directory: options.directory,
    configureBuckets: [{ name: 'bundles' }],
  }) as unknown as S3StandIn & { store: FilesystemStore };
  const { store } = server;
  // Closing waits for every open connection, and the service's S3 client keeps its connections
  // alive: a stop (a test's outage) cuts them, as a server that goes away does.
  const close = server.close.bind(server);
  server.close = async () => {
    const http = (server as unknown as { httpServer?: Server }).httpServer;
    const closed = close();
    http?.closeAllConnections();
    await closed;
  };
  store.deleteObject = async (bucket, key) => {
    await Promise.all(
      ['object', 'object.md5', 'metadata.json'].map((resource) =>
        unlink(store.getResourcePath(bucket, key, resource)).catch(
          (error: NodeJS.ErrnoException) => {
            if (error.code !== 'ENOENT') throw error;
          },
        ),
      ),
    );
  };
  return server;
}
