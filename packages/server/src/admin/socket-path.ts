import path from 'node:path';

/** Where a running service serves the operator's commands: `admin.sock` in its DATA_DIR. */
export const adminSocketPath = (dataDir: string) => path.join(dataDir, 'admin.sock');
