import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { acceptInvitation, addMember, getMe, type Role, verifyEmail } from '@svc/contract';
import PostalMime from 'postal-mime';
import type { TestClient } from './test-client.js';
import type { TestContext } from './test-context.js';
import { waitFor } from './wait.js';

/** The plain text of every outbox message to `email`, newest first (by when it was written). */
export async function outboxTexts(t: TestContext, email: string): Promise<string[]> {
  const mail = t.ctx.config.mail;
  if (mail.transport.kind !== 'outbox') throw new Error('this test context sends over SMTP');
  const dir = mail.transport.dir;
  const names = (await readdir(dir).catch(() => [])).filter((name) => name.endsWith('.eml'));
  const files = await Promise.all(
    names.map(async (name) => {
      const file = path.join(dir, name);
      return { file, written: (await stat(file)).mtimeMs };
    }),
  );
  const texts: string[] = [];
  for (const { file } of files.sort((a, b) => b.written - a.written)) {
    const raw = await readFile(file);
    // Only a message naming the address is worth parsing.
    if (!raw.toString('latin1').toLowerCase().includes(email.toLowerCase())) continue;
    const message = await PostalMime.parse(raw);
    if ((message.to ?? []).some((to) => to.address?.toLowerCase() === email.toLowerCase())) {
      texts.push(`Subject: ${message.subject ?? ''}\n\n${message.text ?? ''}`);
    }
  }
  return texts;
}

/** The tokens of every dashboard link to `page` mailed to `email` so far, newest first. */
export async function linkTokens(t: TestContext, email: string, page: string) {
  const pattern = new RegExp(`/dashboard/${page}\\?token=([A-Za-z0-9_-]+)`);
  return (await outboxTexts(t, email)).flatMap((text) => pattern.exec(text)?.[1] ?? []);
}

/**
 * The token of the newest dashboard link to `page` mailed to `email`, once one has arrived that
 * is not among `before` (the tokens seen before the request that mails it).
 */
export async function mailedLinkToken(
  t: TestContext,
  email: string,
  page: string,
  before: readonly string[] = [],
) {
  return waitFor(
    async () => (await linkTokens(t, email, page)).find((token) => !before.includes(token)),
    15_000,
    `a ${page} link mailed to ${email}`,
  );
}

/** Verifies the signed-in user's address `email` from the sign-up mail, unless it is already. */
export async function verifyAddress(t: TestContext, client: TestClient, email: string) {
  const me = await client.call(getMe);
  if (me.body.user.emailVerified) return;
  // A link sent again voids the ones before it, and may still be on its way: each mailed link is
  // tried once, newest first, until one works.
  const tried = new Set<string>();
  await waitFor(
    async () => {
      for (const token of await linkTokens(t, email, 'verify-email')) {
        if (tried.has(token)) continue;
        tried.add(token);
        if ((await client.send(verifyEmail, { body: { token } })).status === 200) return true;
      }
      return undefined;
    },
    15_000,
    `a working verification link mailed to ${email}`,
  );
}

/**
 * `member` joins the organization the way a person does: `owner` adds the address (an
 * invitation), the member verifies the address from the sign-up mail if not yet, and accepts the
 * invitation from its mail.
 */
export async function joinOrganization(
  t: TestContext,
  input: { owner: TestClient; orgId: string; member: TestClient; email: string; role: Role },
) {
  const { owner, orgId, member, email, role } = input;
  const before = await linkTokens(t, email, 'invitation');
  // The owner's session from an address of its own: a fixture's many members must not meet the
  // mail limit per client address (a person adds a few at a time).
  const inviter = t.newClient();
  for (const [name, value] of owner.cookies) inviter.cookies.set(name, value);
  await inviter.call(addMember, { params: { id: orgId }, body: { email, role } });
  await verifyAddress(t, member, email);
  const token = await mailedLinkToken(t, email, 'invitation', before);
  return (await member.call(acceptInvitation, { body: { token } })).body;
}
