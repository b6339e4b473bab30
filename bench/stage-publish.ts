import { randomBytes } from 'node:crypto';
import { appendFile, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { run as svc } from '../packages/cli/src/main.js';
import { issueAgentToken } from '../packages/server/src/agents/agent-token.js';
import { withServedApp } from './served-app.js';

interface Published {
  version: number;
  tarball: { size: number };
  uploaded: { objects: number; bytes: number };
}

const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/**
 * Publishes a generated home three times with `svc glamp stage` and `confirm` against the
 * service on loopback (fs store): first, then after changing one file, then after changing
 * another, and prints what each uploaded. Target: a republish after one change uploads that
 * file and the tarball only. The first publish writes the bundle's id into bundle.json, so the
 * second carries that file too; the third shows the steady state.
 */
export async function publishTwice(
  generateHome: (root: string, files: number, bytes: number) => Promise<void>,
  options: { megabytes: number; files: number },
): Promise<void> {
  const home = await mkdtemp(path.join(tmpdir(), 'svc-bench-publish-'));
  try {
    await generateHome(home, options.files, options.megabytes * 1e6);
    await withServedApp({ work: false, publicUrl: true }, async ({ ctx, base }) => {
      const { user } = await ctx.accounts.createUser({
        email: `bench-${randomBytes(4).toString('hex')}@example.com`,
        password: 'benchmark password',
        name: 'Bench',
      });
      const agent = await ctx.agents.create(user.id, {
        name: 'bench',
        size: 'small',
        region: 'eu',
        billingType: 'metered',
      });
      const env = {
        HOME: home,
        SVC_API_URL: base,
        SVC_HMAC_TOKEN: issueAgentToken(ctx.secrets.hmacKey, agent.id, 1),
      };
      const cli = async (...argv: string[]) => {
        const out: string[] = [];
        const err: string[] = [];
        const code = await svc(argv, {
          env,
          stdout: { write: (s: string) => out.push(s) },
          stderr: { write: (s: string) => err.push(s) },
        });
        if (code !== 0) throw new Error(`svc ${argv.join(' ')}: ${err.join('')}`);
        return out.join('');
      };
      await cli(
        ...['glamp', 'init', '--name', 'bench-home', '--display-name', 'Bench home'],
        ...['--description', 'A generated home.', '--tags', 'bench'],
      );
      const publish = async (): Promise<Published> => {
        await cli('glamp', 'stage', '--json');
        // The generated home plants tokens on purpose: their flags are accepted.
        return JSON.parse(await cli('glamp', 'confirm', '--accept-flags', '--json'));
      };
      const line = (what: string, p: Published, changed: number) => {
        const others = p.uploaded.bytes - p.tarball.size;
        console.log(
          `  ${what.padEnd(40)} ${String(p.uploaded.objects).padStart(5)} objects ${megabytes(p.uploaded.bytes).padStart(9)}  (tarball ${megabytes(p.tarball.size)}, files ${others} B${changed ? `; the changed file has ${changed} B` : ''})`,
        );
      };
      console.log(`publish: a home of ${options.files} files, about ${options.megabytes} MB`);
      line('first publish', await publish(), 0);
      const change = async (file: string) => {
        const text = `\n// changed ${randomBytes(4).toString('hex')}\n`;
        await appendFile(path.join(home, file), text);
        return (await stat(path.join(home, file))).size;
      };
      const second = await change('projects/p1/src/d1/f1.ts');
      const two = await publish();
      line('second, one file changed (+bundle.json)', two, second);
      const third = await change('projects/p2/src/d2/f2.md');
      const three = await publish();
      line('third, one file changed', three, third);
      const onlyThat =
        three.uploaded.objects === 2 && three.uploaded.bytes === three.tarball.size + third;
      console.log(
        `  a republish after one change uploads the tarball and that file only: ${onlyThat ? 'met' : 'missed'}`,
      );
    });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
