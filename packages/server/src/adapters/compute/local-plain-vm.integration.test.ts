import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PlainVm } from '@svc/contract';
import {
  addVaultEntry,
  createPlainVm,
  deletePlainVm,
  getPlainVm,
  putPlainVmFirewall,
  startPlainVm,
  stopPlainVm,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyPair, ssh } from '../../../test/openssh.js';
import { openSshTerminal } from '../../../test/ssh-terminal.js';
import { createLocalTestContext, signUpUser } from '../../../test/test-context.js';
import { waitFor } from '../../../test/wait.js';
import type { LocalComputeDriver } from './local-compute-driver.js';

describe('a Plain VM on the local driver, reached with the OpenSSH client', () => {
  let t: Awaited<ReturnType<typeof createLocalTestContext>>;
  let driver: LocalComputeDriver;
  let dir: string;
  let chosen: Awaited<ReturnType<typeof keyPair>>;
  let other: Awaited<ReturnType<typeof keyPair>>;
  let vm: PlainVm;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'svc-plain-vm-'));
    t = await createLocalTestContext();
    driver = t.driver;
    await signUpUser(t.client);
    [chosen, other] = await Promise.all([keyPair(dir, 'chosen'), keyPair(dir, 'other')]);
    // Both keys are in the Vault; only one is chosen for the VM.
    const vault = await Promise.all(
      [chosen, other].map(
        async (key, i) =>
          (
            await t.client.call(addVaultEntry, {
              body: {
                type: 'ssh_key',
                label: `k${i}`,
                value: key.publicLine,
              },
            })
          ).body.id as string,
      ),
    );
    const created = await t.client.call(createPlainVm, {
      body: {
        name: 'box',
        tier: 'small',
        region: 'eu',
        osImageKey: 'ubuntu-24.04',
        billingType: 'metered',
        access: { passwordEnabled: false, vaultEntryIds: vault.slice(0, 1) },
      },
    });
    expect(created.status).toBe(201);
    await waitFor(
      async () =>
        (await t.client.call(getPlainVm, { params: { id: created.body.id } })).body.status ===
        'running',
      30_000,
      'running',
    );
    vm = (await t.client.call(getPlainVm, { params: { id: created.body.id } })).body;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const firewall = (sourceIps: string[], port = '22') =>
    t.client.call(putPlainVmFirewall, {
      params: { id: vm.id },
      body: {
        rules: [{ protocol: 'tcp', port, sourceIps }],
      },
    });

  it('shows where to connect and lets the default user in with the chosen Vault key, in its home', async () => {
    expect(vm.ssh).toEqual({ host: '127.0.0.1', port: expect.any(Number) });
    const port = vm.ssh?.port as number;
    expect(await ssh(port, 'ubuntu', chosen.file, 'echo ok')).toEqual({ code: 0, stdout: 'ok\n' });
    expect(await ssh(port, 'ubuntu', chosen.file, 'pwd')).toEqual({
      code: 0,
      stdout: `${driver.homeOf(vm.id)}\n`,
    });
  });

  it('refuses a key that is in the Vault but was not chosen, and any other user', async () => {
    const port = vm.ssh?.port as number;
    expect((await ssh(port, 'ubuntu', other.file, 'echo ok')).code).toBe(255);
    expect((await ssh(port, 'root', chosen.file, 'echo ok')).code).toBe(255);
  });

  it('applies firewall changes without a restart: refused when 127.0.0.1 is no longer allowed on 22, let in again after', async () => {
    const port = vm.ssh?.port as number;
    const pid = (await driver.isProcessAlive(vm.id)) && port;
    expect((await firewall(['10.0.0.0/8'])).body.rules[0]?.sourceIps).toEqual(['10.0.0.0/8']);
    expect((await ssh(port, 'ubuntu', chosen.file, 'echo ok')).code).toBe(255);
    // Allowed address, wrong port: still refused.
    await firewall(['127.0.0.1'], '2222');
    expect((await ssh(port, 'ubuntu', chosen.file, 'echo ok')).code).toBe(255);
    expect((await firewall(['127.0.0.1'])).body.rules[0]?.sourceIps).toEqual(['127.0.0.1/32']);
    expect(await ssh(port, 'ubuntu', chosen.file, 'echo ok')).toEqual({ code: 0, stdout: 'ok\n' });
    expect(await driver.isProcessAlive(vm.id)).toBe(Boolean(pid));
  });

  it('gives the default user an interactive shell with a terminal: typed commands run, the window resizes, Ctrl-C interrupts, leaving hangs up', async () => {
    const port = vm.ssh?.port as number;
    const home = driver.homeOf(vm.id);
    const term = await openSshTerminal(port, 'ubuntu', chosen.file, { cols: 100, rows: 30 });
    try {
      // The prompt names the image's default user and the VM, in its home (`~`).
      const prompt = /ubuntu@box:~\$ $/;
      await term.waitFor(prompt);
      // Typed text comes back through the terminal (echoed, \n shown as \r\n; a line may start
      // with bash's bracketed-paste switch, then \r).
      let mark = term.output().length;
      term.type('echo $((6*7))\r');
      await term.waitFor(/[\r\n]42\r\n/, mark);
      mark = term.output().length;
      term.type('echo "$USER $LOGNAME $HOME $TERM"; pwd; tty\r');
      await term.waitFor(
        new RegExp(`[\r\n]ubuntu ubuntu ${home} xterm\r\n${home}\r\n/dev/pts/\\d+\r\n`),
        mark,
      );

      mark = term.output().length;
      term.type('stty size\r');
      await term.waitFor(/[\r\n]30 100\r\n/, mark);
      term.resize(120, 40);
      mark = term.output().length;
      term.type('stty size\r');
      await term.waitFor(/[\r\n]40 120\r\n/, mark);

      // Ctrl-C reaches the foreground command through the terminal, and the prompt returns.
      term.type('sleep 4242\r');
      await waitFor(() => hasProcess('4242'), 20_000, 'sleep 4242 running');
      mark = term.output().length;
      term.type('\x03');
      await term.waitFor(/\^C\r\n.*ubuntu@box:~\$ $/s, mark);
      expect(await hasProcess('4242')).toBe(false);
      mark = term.output().length;
      term.type('echo "status $?"\r');
      await term.waitFor(/[\r\n]status 130\r\n/, mark);

      // A client that goes away hangs up the shell and what runs in it.
      term.type('sleep 4343\r');
      await waitFor(() => hasProcess('4343'), 20_000, 'sleep 4343 running');
    } finally {
      term.close();
    }
    await waitFor(async () => !(await hasProcess('4343')), 20_000, 'sleep 4343 gone');
  });

  it('ends the session with the status of the shell', async () => {
    const term = await openSshTerminal(vm.ssh?.port as number, 'ubuntu', chosen.file, {
      cols: 80,
      rows: 24,
    });
    await term.waitFor(/ubuntu@box:~\$ $/);
    term.type('exit 5\r');
    expect(await term.exit).toEqual({ code: 5 });
    term.close();
  });

  it('keeps the home across stop and start, and destroy removes the machine', async () => {
    const port = vm.ssh?.port as number;
    await ssh(port, 'ubuntu', chosen.file, 'echo kept > note.txt');
    await t.client.call(stopPlainVm, { params: { id: vm.id } });
    const status = async () =>
      (await t.client.call(getPlainVm, { params: { id: vm.id } })).body.status;
    await waitFor(async () => (await status()) === 'stopped', 15_000, 'stopped');
    expect((await ssh(port, 'ubuntu', chosen.file, 'echo ok')).code).toBe(255);
    await t.client.call(startPlainVm, { params: { id: vm.id } });
    await waitFor(async () => (await status()) === 'running', 15_000, 'running');
    expect(await ssh(port, 'ubuntu', chosen.file, 'cat note.txt')).toEqual({
      code: 0,
      stdout: 'kept\n',
    });
    await t.client.call(deletePlainVm, { params: { id: vm.id } });
    await waitFor(
      async () => (await t.client.send(getPlainVm, { params: { id: vm.id } })).status === 404,
      15_000,
      'removed',
    );
    expect(existsSync(path.join(driver.root, vm.id))).toBe(false);
    expect(await driver.isProcessAlive(vm.id)).toBe(false);
  });
});

/** Whether a `sleep <seconds>` process runs on this host. */
async function hasProcess(seconds: string): Promise<boolean> {
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline === `sleep\0${seconds}\0`) return true;
  }
  return false;
}
