import { Email, Password, Role, Slug } from '@svc/contract';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';

interface AdminCommand<A extends z.ZodType = z.ZodType> {
  readonly summary: string;
  /** Option names, each `--name <value>`, with the values' schema. */
  readonly args: A;
  /** Option names that may also be given as positional arguments, in this order. */
  readonly positional?: readonly string[];
  /** Options that are switches (`--regenerate`), passed on as "true". */
  readonly flags?: readonly string[];
  /** Answers a list of rows: a table on a terminal. */
  readonly list?: boolean;
  run(ctx: AppContext, args: z.infer<A>): Promise<unknown>;
}

const command = <A extends z.ZodType>(c: AdminCommand<A>) => c as unknown as AdminCommand;
const AccountRef = z.string().min(1).describe('account slug or id');
// The CLI loads this table to parse its options before it knows whether a service will answer:
// what only runs in-process is imported when it runs, so asking the service stays quick.
const listings = () => import('./listings.repo.js');

/**
 * The operator's commands. The same table runs inside the service (over the admin socket) and in
 * the CLI process when no service holds the database.
 */
export const adminCommands: Readonly<Record<string, AdminCommand>> = {
  migrate: command({
    summary: 'Apply pending database migrations',
    args: z.object({}),
    run: async (ctx) => {
      const { migrateToLatest } = await import('../db/migrate.js');
      return { applied: await migrateToLatest(ctx.database.db.withoutPlugins()) };
    },
  }),
  'create-user': command({
    summary: 'Create a user and their personal account',
    args: z.object({ email: Email, password: Password, name: z.string().trim().min(1).max(100) }),
    run: (ctx, args) => ctx.accounts.createUser(args),
  }),
  'create-org': command({
    summary: 'Create an organization owned by an existing user',
    args: z.object({ name: z.string().trim().min(1).max(100), slug: Slug, owner: Email }),
    run: async (ctx, args) => {
      const owner = await ctx.accounts.findUserByEmail(args.owner);
      if (!owner) throw new AppError('not_found', { message: `no user "${args.owner}"` });
      return ctx.accounts.createOrg({
        name: args.name,
        slug: args.slug,
        ownerUserId: owner.id,
      });
    },
  }),
  'add-member': command({
    summary: 'Add an existing user to an organization',
    args: z.object({ org: AccountRef, email: Email, role: Role.default('member') }),
    run: async (ctx, args) => {
      const org = await ctx.accounts.findAccount(args.org);
      return ctx.accounts.addMember('operator', {
        accountId: org.id,
        email: args.email,
        role: args.role,
      });
    },
  }),
  'pool status': command({
    summary: "The warm pool's cells (INCUS_WARM_POOL): machines wanted, ready and starting",
    args: z.object({}),
    list: true,
    run: async (ctx) => (await ctx.compute.poolStatus?.()) ?? [],
  }),
  'agent legacy': command({
    summary: 'Move an Agent to the legacy cohort (provider fly)',
    args: z.object({ id: z.uuid() }),
    positional: ['id'],
    run: (ctx, args) => ctx.agents.markLegacy(args.id),
  }),
  'agent token': command({
    summary: "Print an Agent's HMAC token; --regenerate issues a new one (old ones stop working)",
    args: z.object({ id: z.uuid(), regenerate: z.stringbool().default(false) }),
    positional: ['id'],
    flags: ['regenerate'],
    run: (ctx, args) => ctx.agents.agentToken(args.id, args.regenerate),
  }),
  'mail last': command({
    summary: 'Print the newest outbox message to an address (without SMTP_URL)',
    args: z.object({ email: Email }),
    positional: ['email'],
    run: (ctx, args) => ctx.mail.latestInOutbox(args.email),
  }),
  'reencrypt-tokens': command({
    summary: 'Seal every stored app connection token again with the primary ENCRYPTION_KEYS key',
    args: z.object({}),
    run: async (ctx) => {
      const { reencryptTokens } = await import('../app-connections/reencrypt-tokens.js');
      return reencryptTokens(ctx.database, ctx.tokenCipher);
    },
  }),
  'list users': command({
    summary: 'List every user (newest first)',
    args: z.object({}),
    list: true,
    run: async (ctx) => (await listings()).listUsers(ctx.database.db),
  }),
  'list orgs': command({
    summary: 'List every organization with its member count and subscription',
    args: z.object({}),
    list: true,
    run: async (ctx) => (await listings()).listOrganizations(ctx.database.db),
  }),
  'list agents': command({
    summary: 'List every Agent with its account and state',
    args: z.object({}),
    list: true,
    run: async (ctx) => (await listings()).listAgents(ctx.database.db),
  }),
  'list plain-vms': command({
    summary: 'List every Plain VM with its account and state',
    args: z.object({}),
    list: true,
    run: async (ctx) => (await listings()).listPlainVms(ctx.database.db),
  }),
  'invoice paid': command({
    summary:
      "Mark an invoice paid; with BILLING_PROVIDER=none the account's subscription follows its invoices",
    args: z.object({ number: z.coerce.number().int().positive() }),
    positional: ['number'],
    run: (ctx, args) => ctx.billing.markInvoicePaid(args.number),
  }),
  'invoice list': command({
    summary: "List invoices, newest first: every account's, or one account's",
    args: z.object({ account: AccountRef.optional() }),
    list: true,
    run: async (ctx, args) => {
      const accountId = args.account && (await ctx.accounts.findAccount(args.account)).id;
      return ctx.billing.listAllInvoices(accountId ? { accountId } : {});
    },
  }),
  'invoices close': command({
    summary: 'Close every finished month not yet invoiced now (what the hourly job does)',
    args: z.object({}),
    run: (ctx) => ctx.billing.closePeriods(),
  }),
  subscription: command({
    summary: "Turn an account's subscription on or off",
    args: z.object({ state: z.enum(['on', 'off']), account: AccountRef }),
    positional: ['state', 'account'],
    run: async (ctx, args) => {
      const account = await ctx.accounts.findAccount(args.account);
      return args.state === 'on'
        ? ctx.subscriptions.activate('operator', account.id)
        : ctx.subscriptions.deactivate('operator', account.id);
    },
  }),
};

/** Validates and runs one command; errors come back as `AppError`s with readable messages. */
export async function runAdminCommand(
  ctx: AppContext,
  name: string,
  rawArgs: unknown,
): Promise<unknown> {
  const entry = adminCommands[name];
  if (!entry) throw new AppError('not_found', { message: `unknown command "${name}"` });
  const parsed = entry.args.safeParse(rawArgs ?? {});
  if (!parsed.success) {
    const message = parsed.error.issues
      .map((i) => `--${i.path.join('.')}: ${i.message}`)
      .join('; ');
    throw new AppError('invalid_request', { message });
  }
  return entry.run(ctx, parsed.data);
}
