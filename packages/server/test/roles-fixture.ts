import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { Role } from '@svc/contract';
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

const expectStatus = (what: string, res: { status: number; body: unknown }, status: number) => {
  if (res.status !== status) {
    throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  }
  return res.body as any;
};

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
    const org = await by.post('/api/orgs', { name: `Org ${slug}`, slug });
    const { id } = expectStatus('org', org, 201);
    expectStatus('subscription', await by.post(`/api/accounts/${id}/subscription`), 200);
    return { id: id as string, slug };
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

  const machine = { size: 'small', region: 'eu', billingType: 'metered', accountId: org.id };
  const newAgent = async (billingType = 'metered') => {
    const res = await ownerClient.post('/api/agents', {
      ...machine,
      name: uniqueName('agent'),
      billingType,
    });
    return expectStatus('agent', res, 201).id as string;
  };
  /** Waits until the machine (`agents` or `plain-vms`) runs. */
  const running = async (path: 'agents' | 'plain-vms', id: string) => {
    await waitFor(
      async () => (await ownerClient.get(`/api/${path}/${id}`)).body.status === 'running',
      60_000,
      `${path}/${id} running`,
    );
    return id;
  };
  const newPlainVm = async () => {
    const res = await ownerClient.post('/api/plain-vms', {
      name: uniqueName('vm'),
      tier: 'small',
      region: 'eu',
      osImageKey: 'debian-12',
      billingType: 'metered',
      access: { passwordEnabled: true, vaultEntryIds: [] },
      accountId: org.id,
    });
    return expectStatus('plain VM', res, 201).id as string;
  };
  const newVaultKey = async () => {
    const res = await ownerClient.post('/api/vault', {
      type: 'ssh_key',
      label: 'fixture',
      value: publicKeyLine('fixture@test'),
      accountId: org.id,
    });
    return expectStatus('vault key', res, 201).id as string;
  };
  /** A new app connection of the organization (each with a provider account of its own). */
  const newConnection = async () => {
    const ids = async () =>
      (await ownerClient.get(`/api/apps?accountId=${org.id}`)).body.map(
        (c: { id: string }) => c.id,
      ) as string[];
    const before = new Set(await ids());
    const { callback } = await connectApp(ownerClient, 'suite', {
      login: uniqueName('login'),
      accountId: org.id,
    });
    expectStatus('app callback', callback, 200);
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
    const res = await ownerClient.post(`/api/orgs/${org.id}/invitations`, {
      email: `${uniqueName('invitee')}@example.com`,
      role: 'member',
    });
    return expectStatus('invitation', res, 201).id as string;
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
    const res = await caller.client.post('/api/me/tokens', { name: uniqueName('token'), scope });
    return expectStatus('token', res, 201) as { id: string; token: string };
  };
  /** Another session of the caller's (signed in from another client), by its id. */
  const newSession = async (caller: Caller) => {
    const other = t.newClient();
    expectStatus(
      'sign-in',
      await other.post('/api/auth/sign-in', { email: caller.email, password: PASSWORD }),
      200,
    );
    const { sessions } = (await caller.client.get('/api/me/sessions')).body as {
      sessions: { id: string; current: boolean }[];
    };
    const found = sessions.find((s) => !s.current);
    if (!found) throw new Error('no other session');
    return found.id;
  };

  // A subscription-billed Agent holds a slot: removing that slot is refused (409) after the
  // role check, which is all the slot is here for.
  await newAgent('subscription');
  const slots = (await ownerClient.get(`/api/accounts/${org.id}/slots`)).body as { id: string }[];
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
