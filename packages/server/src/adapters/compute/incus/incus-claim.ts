import { randomUUID } from 'node:crypto';
import type { CreateServerSpec, ServerLogin } from '../compute-driver.js';
import type { IncusClient } from './incus-client.js';
import { type Instance, isAgentInstance } from './incus-instance.js';

// Making a claimed warm-pool member (`incus-warm-pool.ts`) what a fresh machine of the same spec
// is after its first boot. A fresh Plain VM gets its hostname, its default user's keys and
// password and the SSH password setting from cloud-init; a member already ran cloud-init (as
// nobody's), so the same results are written here in one command (cloud-init run again takes
// seconds, a large part of what the pool saves). `incus-warm-pool.incus.test.ts` compares a
// claimed machine with a fresh one file by file.

/** Where the claim's inputs wait inside the member for the one command that applies them. */
const CLAIM_DIR = '/run/svc-claim';
/** A claim's command may not hang the create: it gives up after this many seconds. */
const CLAIM_TIMEOUT_S = 60;
const ROOT_ONLY = { uid: 0, gid: 0, mode: 0o600 } as const;

/**
 * A machine id of its own (the member's was made at its boot, before anyone claimed it), the
 * hostname a fresh machine has, kept across reboots in /etc/hostname, and its instance name
 * where /etc/hosts names the member's.
 */
const IDENTITY = `
rm -f /etc/machine-id
systemd-machine-id-setup >/dev/null
# journald files its entries under the machine id it read at its start.
systemctl restart systemd-journald
name=$(cat ${CLAIM_DIR}/hostname)
echo "$name" >/etc/hostname
hostname "$name"
sed -i "s/\\b$(cat ${CLAIM_DIR}/member)\\b/$(cat ${CLAIM_DIR}/instance)/g" /etc/hosts
`;

/** The default user's keys and password, and sshd's password login, as cloud-init sets them. */
const LOGIN = `
user=$(cat ${CLAIM_DIR}/user)
home=$(getent passwd "$user" | cut -d: -f6)
group=$(id -gn "$user")
install -d -m 0700 -o "$user" -g "$group" "$home/.ssh"
install -m 0600 -o "$user" -g "$group" ${CLAIM_DIR}/authorized_keys "$home/.ssh/authorized_keys"
if [ -s ${CLAIM_DIR}/password-hash ]; then
  usermod -p "$(cat ${CLAIM_DIR}/password-hash)" "$user"
  login=yes
else
  passwd -l "$user" >/dev/null
  login=no
fi
# cloud-init writes the setting into a drop-in where sshd reads one, else into sshd_config.
conf=/etc/ssh/sshd_config.d/50-cloud-init.conf
[ -e "$conf" ] || conf=/etc/ssh/sshd_config
if grep -qE '^#?PasswordAuthentication ' "$conf"; then
  sed -i -E "s/^#?PasswordAuthentication .*/PasswordAuthentication $login/" "$conf"
else
  echo "PasswordAuthentication $login" >>"$conf"
fi
# Ubuntu starts sshd per connection (ssh.socket): nothing to reload there.
systemctl try-reload-or-restart ssh.service 2>/dev/null || systemctl try-reload-or-restart sshd.service
`;

/** Writes the claim's inputs, runs `script` over them, and leaves nothing of them behind. */
async function apply(
  client: IncusClient,
  name: string,
  inputs: Readonly<Record<string, string>>,
  script: string,
): Promise<void> {
  // A directory per attempt: a retry never reads or removes another attempt's inputs.
  const dir = `${CLAIM_DIR}-${randomUUID()}`;
  await client.makeDirectory(name, dir, { ...ROOT_ONLY, mode: 0o700 });
  for (const [file, content] of Object.entries(inputs)) {
    await client.pushFile(name, `${dir}/${file}`, content, ROOT_ONLY);
  }
  // The inputs (a password hash among them) are removed whatever the script ends with.
  const result = await client.exec(name, [
    'timeout',
    String(CLAIM_TIMEOUT_S),
    'sh',
    '-c',
    `trap 'rm -rf ${dir}' EXIT\nset -eu\n${script.replaceAll(CLAIM_DIR, dir)}`,
  ]);
  if (result.code !== 0) {
    throw new Error(`claiming ${name} failed (exit ${result.code}): ${result.stderr.trim()}`);
  }
}

/**
 * A claimed Plain VM member (`name`) made the tenant's as if it were the instance `instance`
 * (`svc-<id>`): its hostname, machine id, the default user's
 * keys and password, sshd's password login, and the tenant's user data as its cloud-init seed
 * (what `incus config` and a later cloud-init run read).
 */
export async function claimPlainVm(
  client: IncusClient,
  name: string,
  instance: string,
  spec: CreateServerSpec & { readonly login: ServerLogin },
): Promise<void> {
  const { login } = spec;
  await apply(
    client,
    name,
    {
      hostname: login.hostname ?? instance,
      member: name,
      instance,
      user: login.user,
      authorized_keys: login.authorizedKeys.map((key) => `${key}\n`).join(''),
      ...(login.passwordHash && { 'password-hash': login.passwordHash }),
    },
    `${IDENTITY}${LOGIN}`,
  );
  if (spec.userData !== undefined) {
    await client.pushFile(name, '/var/lib/cloud/seed/nocloud-net/user-data', spec.userData, {
      ...ROOT_ONLY,
    });
  }
}

/**
 * A claimed Agent member made the machine's: its machine id and hostname (a fresh Agent's is its
 * instance name, `svc-<id>`, which Incus gives it). Its credentials and
 * certificate are pushed as for any Agent; `restartGateway` then starts the gateway on them.
 */
export async function claimAgent(client: IncusClient, name: string, instance: string) {
  await apply(client, name, { hostname: instance, member: name, instance }, IDENTITY);
}

/**
 * The gateway started afresh on the credentials just pushed: in the pool it had none, and
 * systemd gave up restarting it.
 */
export async function restartGateway(client: IncusClient, name: string): Promise<void> {
  const result = await client.exec(name, [
    'sh',
    '-c',
    'systemctl reset-failed svc-gateway.service; systemctl restart --no-block svc-gateway.service',
  ]);
  if (result.code !== 0) {
    throw new Error(`starting the gateway of ${name} failed: ${result.stderr.trim()}`);
  }
}

/**
 * Whether a running warm-pool member is ready to hand out: systemd done booting (`degraded`
 * passes: a unit of the image may fail without harm) and, on a Plain VM, its SSH server running.
 */
export async function isWellMember(client: IncusClient, instance: Instance): Promise<boolean> {
  // Ubuntu's sshd listens through ssh.socket and runs per connection.
  const ssh = isAgentInstance(instance)
    ? ''
    : '&& systemctl is-active -q ssh.service sshd.service ssh.socket';
  const check = `case "$(systemctl is-system-running)" in running|degraded) true ;; *) false ;; esac ${ssh}`;
  const result = await client
    .exec(instance.name, ['timeout', '10', 'sh', '-c', check])
    .catch(() => undefined);
  return result?.code === 0;
}
