import { z } from 'zod';
import { Id, Timestamp } from './common.js';
import { defineEndpoint } from './endpoint.js';

/** The public key types the Vault accepts (docs/reference.md#vault). */
export const SshKeyType = z.enum([
  'ssh-rsa',
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'sk-ssh-ed25519@openssh.com',
  'sk-ecdsa-sha2-nistp256@openssh.com',
]);
export type SshKeyType = z.infer<typeof SshKeyType>;

export const VaultEntry = z.object({
  id: Id,
  accountId: Id,
  label: z.string(),
  type: SshKeyType,
  /** `SHA256:` and the unpadded base64 SHA-256 of the key blob, as `ssh-keygen -lf` prints it. */
  fingerprintSha256: z.string(),
  createdAt: Timestamp,
});
export type VaultEntry = z.infer<typeof VaultEntry>;

export const addVaultEntry = defineEndpoint({
  id: 'addVaultEntry',
  method: 'POST',
  path: '/api/vault',
  auth: 'session',
  tag: 'vault',
  summary:
    "Add an OpenSSH public key to an account's Vault (default: the caller's personal account).",
  body: z.object({
    type: z.literal('ssh_key'),
    label: z.string().trim().min(1, 'Give the key a label').max(100),
    /** One OpenSSH public key line: `<type> <base64> [comment]`. */
    value: z.string().min(1).max(16_384),
    accountId: Id.optional(),
  }),
  response: { status: 201, body: VaultEntry },
  errors: ['invalid_public_key', 'duplicate_key'],
});

export const listVaultEntries = defineEndpoint({
  id: 'listVaultEntries',
  method: 'GET',
  path: '/api/vault',
  auth: 'session',
  tag: 'vault',
  summary:
    'The Vault keys of one account (`accountId`), or of every account the caller belongs to.',
  query: z.object({ accountId: Id.optional() }),
  response: { status: 200, body: z.array(VaultEntry) },
  errors: [],
});

export const deleteVaultEntry = defineEndpoint({
  id: 'deleteVaultEntry',
  method: 'DELETE',
  path: '/api/vault/{id}',
  auth: 'session',
  tag: 'vault',
  summary: 'Remove a key from the Vault (VMs that already have it keep it).',
  params: z.object({ id: Id }),
  response: { status: 204 },
  errors: [],
});

export const vaultEndpoints = [addVaultEntry, listVaultEntries, deleteVaultEntry] as const;
