import path from 'node:path';
import pino from 'pino';
import { readHostKey, readSshAccess } from './local-plain-vm.js';
import { startSshServer } from './local-ssh-server.js';

/**
 * The process of a running local Plain VM: `node … local-plain-vm.main.ts --svc-machine=<id>
 * <dir> <port>`. It serves SSH on the VM's loopback port until stopped.
 */
const [, , , dir, port] = process.argv as [string, string, string, string, string];
const log = pino({ base: { machine: path.basename(dir) } });

const server = await startSshServer({
  hostKey: await readHostKey(dir),
  port: Number(port),
  log,
  access: () => readSshAccess(dir, path.join(dir, 'home')),
});
log.info({ port: server.port }, 'ssh listening');

// Powering off drops every connection at once, as a VM's would.
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => process.exit(0));
