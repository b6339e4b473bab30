import { generateKeyPairSync, randomUUID } from 'node:crypto';
import {
  activateSubscription,
  addVaultEntry,
  type BillingType,
  createAgent,
  createApiToken,
  createInvitation,
  createOrg,
  createPlainVm,
  getAgent,
  getPlainVm,
  listAppConnections,
  listSessions,
  listSlots,
  type Role,
  signIn,
} from '@svc/contract';
import { upsertInvitation } from '../src/accounts/invitations.repo.js';
import { hashSecret, newSecret } from '../src/accounts/sessions.js';
import { type AppsTest, connectApp, createAppsTest } from './apps-fixture.js';
import {
  type AgentClient,
  agentClientOf,
  manifestOf,
  publishSimple,
} from './bundle-test-helpers.js';
import { joinOrganization, verifyAddress } from './mailed-links.js';
import type { TestClient } from './test-client.js';
import { signUpUser, type TestContext } from './test-context.js';
import type { DatabaseKind } from './test-db.js';
import { waitFor } from './wait.js';

/** The password `signUpUser` gives every user. */
export const PASSWORD = 'correct horse battery';

/** Who calls: a role in the fixture's organization, or a signed-in user outside it. */
export type CallerKind = Role | 'outsider';
export const CALLER_KINDS: readonly CallerKind[] = ['owner', 'admin', 'member', 'outsider'];

export interface Caller {
  readonly kind: CallerKind;
  readonly client: TestClient;
  readonly id: string;
  readonly email: string;
  /** The caller's personal account. */
  readonly personalId: string;
}

let unique = 0;
/** A name no other call of this process used. */
export const uniqueName = (prefix: string) => `${prefix}-${++unique}-${Date.now().toString(36)}`;

/** An OpenSSH ed25519 public key line, new each call. */
export function publicKeyLine(comment: string) {
  const { publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
  const field = (bytes: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  const blob = Buffer.concat([field(Buffer.from('ssh-ed25519')), field(raw)]);
  return `ssh-ed25519 ${blob.toString('base64')} ${comment}`;
}

/**
 * An organization with an active subscription, its owner, an admin and a member, a signed-in
 * user outside it, and one of each kind of resource it can hold; plus factories for fresh ones,
 * for the calls that use theirs up.
 */
export async function createRolesFixture(kind: DatabaseKind) {
  const apps: AppsTest = await createAppsTest(kind, { env: { PROVISION_TIMEOUT_MS: '60000' } });
  const { t } = apps;

  const signUp = async (as: CallerKind): Promise<Caller> => {
    const client = t.newClient();
    const { user, account } = await signUpUser(client);
    return { kind: as, client, id: user.id, email: user.email, personalId: account.id };
  };
  const owner = await signUp('owner');
  const ownerClient = owner.client;
  /** A new organization with an active subscription, of `by` (default: the owner). */
  const newOrg = async (prefix: string, by = ownerClient) => {
    const slug = uniqueName(prefix);
    const { id } = (await by.call(createOrg, { body: { name: `Org ${slug}`, slug } })).body;
    await by.call(activateSubscription, { params: { id } });
    return { id, slug };
  };
  const org = await newOrg('roles');
  /** Where callers accept invitations: none of them is a member, and none becomes one of `org`. */
  const inviteOrg = await newOrg('invites', (await signUp('outsider')).client);

  /** The caller joins `org` as a person does: invited, verified, accepting from the mail. */
  const addMember = (caller: Caller, role: Role) =>
    joinOrganization(t, {
      owner: ownerClient,
      orgId: org.id,
      member: caller.client,
      email: caller.email,
      role,
    });
  const callers = { owner } as Record<CallerKind, Caller>;
  for (const role of ['admin', 'member'] as const) {
    callers[role] = await signUp(role);
    await addMember(callers[role], role);
  }
  callers.outsider = await signUp('outsider');

  const newAgent = async (billingType: BillingType = 'metered') => {
    const res = await ownerClient.call(createAgent, {
      body: {
        name: uniqueName('agent'),
        size: 'small',
        region: 'eu',
        billingType,
        accountId: org.id,
      },
    });
    return res.body.id;
  };
  const statusOf = async (path: 'agents' | 'plain-vms', id: string) =>
    path === 'agents'
      ? (await ownerClient.call(getAgent, { params: { id } })).body.status
      : (await ownerClient.call(getPlainVm, { params: { id } })).body.status;
  /** Waits until the machine (`agents` or `plain-vms`) runs. */
  const running = async (path: 'agents' | 'plain-vms', id: string) => {
    await waitFor(
      async () => (await statusOf(path, id)) === 'running',
      60_000,
      `${path}/${id} running`,
    );
    return id;
  };
  const newPlainVm = async () => {
    const res = await ownerClient.call(createPlainVm, {
      body: {
        name: uniqueName('vm'),
        tier: 'small',
        region: 'eu',
        osImageKey: 'debian-12',
        billingType: 'metered',
        access: { passwordEnabled: true, vaultEntryIds: [] },
        accountId: org.id,
      },
    });
    return res.body.id;
  };
  const newVaultKey = async () => {
    const res = await ownerClient.call(addVaultEntry, {
      body: {
        type: 'ssh_key',
        label: 'fixture',
        value: publicKeyLine('fixture@test'),
        accountId: org.id,
      },
    });
    return res.body.id;
  };
  /** A new app connection of the organization (each with a provider account of its own). */
  const newConnection = async () => {
    const ids = async () =>
      (await ownerClient.call(listAppConnections, { query: { accountId: org.id } })).body.map(
        (c) => c.id,
      );
    const before = new Set(await ids());
    const { callback } = await connectApp(ownerClient, 'suite', {
      login: uniqueName('login'),
      accountId: org.id,
    });
    if (callback.status !== 200) {
      throw new Error(
        `app callback: ${callback.status} ${JSON.stringify(callback.body).slice(0, 300)}`,
      );
    }
    const id = (await ids()).find((c) => !before.has(c));
    if (!id) throw new Error('no new app connection');
    return id;
  };
  const agentId = await running('agents', await newAgent());
  const publisher: AgentClient = agentClientOf(t, agentId);
  /** A new bundle of the organization, published by its Agent. */
  const newBundle = async () => {
    const name = uniqueName('bundle');
    const { version } = await publishSimple(t, publisher, manifestOf(name));
    return { name, version: String(version) };
  };
  /** A new user who joins the organization with `role`. */
  const newMember = async (role: Role = 'member') => {
    const joining = await signUp('outsider');
    await addMember(joining, role);
    return joining;
  };
  const newInvitation = async () => {
    const res = await ownerClient.call(createInvitation, {
      params: { id: org.id },
      body: { email: `${uniqueName('invitee')}@example.com`, role: 'member' },
    });
    return res.body.id;
  };
  /**
   * The token of a fresh invitation into `inviteOrg` for the invitee's address, verified first
   * (an invitation is for its verified address only; the link is mailed, this writes its hash).
   */
  const newInvitationToken = async (invitee?: Caller) => {
    const email = invitee?.email ?? `${uniqueName('invitee')}@example.com`;
    if (invitee) await verifyAddress(t, invitee.client, invitee.email);
    const token = newSecret();
    const now = t.clock.now();
    await upsertInvitation(t.ctx.database.db, {
      id: randomUUID(),
      accountId: inviteOrg.id,
      email,
      role: 'member',
      tokenHash: hashSecret(token),
      invitedBy: owner.id,
      createdAt: now,
      expiresAt: new Date(now.getTime() + 24 * 3_600_000),
    });
    return token;
  };
  const newApiToken = async (caller: Caller, scope: 'read' | 'write' = 'read') => {
    return (
      await caller.client.call(createApiToken, { body: { name: uniqueName('token'), scope } })
    ).body;
  };
  /** Another session of the caller's (signed in from another client), by its id. */
  const newSession = async (caller: Caller) => {
    const other = t.newClient();
    await other.call(signIn, { body: { email: caller.email, password: PASSWORD } });
    const { sessions } = (await caller.client.call(listSessions)).body;
    const found = sessions.find((s) => !s.current);
    if (!found) throw new Error('no other session');
    return found.id;
  };

  // A subscription-billed Agent holds a slot: removing that slot is refused (409) after the
  // role check, which is all the slot is here for.
  await newAgent('subscription');
  const slots = (await ownerClient.call(listSlots, { params: { id: org.id } })).body;
  const slotId = slots[0]?.id;
  if (!slotId) throw new Error('no slot');

  return {
    t: t as TestContext,
    org,
    callers,
    agentId,
    plainVmId: await running('plain-vms', await newPlainVm()),
    vaultKeyId: await newVaultKey(),
    connectionId: await newConnection(),
    bundle: await newBundle(),
    invitationId: await newInvitation(),
    slotId,
    newOrg,
    /** A new signed-up user, a member of nothing but their personal account. */
    newUser: () => signUp('outsider'),
    newAgent,
    newPlainVm,
    runningAgent: async () => running('agents', await newAgent()),
    runningPlainVm: async () => running('plain-vms', await newPlainVm()),
    /** Waits until the fixture's Agent or Plain VM runs again. */
    running,
    newVaultKey,
    newConnection,
    newBundle,
    newMember,
    newInvitation,
    newInvitationToken,
    newApiToken,
    newSession,
    close: () => apps.close(),
  };
}

export type RolesFixture = Awaited<ReturnType<typeof createRolesFixture>>;
