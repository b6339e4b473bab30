import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Command } from 'commander';

/** The script that builds and imports the Incus images (it runs the `incus` client as root). */
const IMAGES_SCRIPT = path.join(import.meta.dirname, '../../../../scripts/incus-images.sh');

/**
 * `images build` and `images sync`: host work for the `incus` driver, done by the script with
 * the `incus` client, not through the service (no database is involved).
 */
export function registerImageCommands(program: Command, done: (code: number) => void): void {
  const images = program
    .command('images')
    .description('Incus images: the OS images of Plain VMs and the Agent image (root)');
  images
    .command('build')
    .description(
      "Build Debian 12 and 13 from Debian's archive where missing, and the Agent image (svc, code-server) where not current",
    )
    .action(async () => done(await runScript(['build'])));
  images
    .command('sync')
    .description('Import the other OS images from an image server (one must be reachable)')
    .action(async () => done(await runScript(['sync'])));
}

function runScript(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [IMAGES_SCRIPT, ...args], { stdio: 'inherit' });
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}
