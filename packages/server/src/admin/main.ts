import { Command } from 'commander';
import { ConfigError } from '../config/config.js';
import { type AdminOutcome, NoDataDirError, runAdmin } from './admin-client.js';
import { adminCommands } from './commands.js';
import { registerImageCommands } from './images.js';
import { formatResult } from './output.js';

const GROUPS: Readonly<Record<string, string>> = {
  agent: "An Agent's cohort and HMAC token",
  invoice: 'Invoices: mark one paid, list them',
  invoices: 'The period close: issue the invoices of every finished month',
  list: 'List users, orgs, agents or plain-vms (a table on a terminal, else JSON)',
  mail: 'The outbox (without SMTP_URL)',
};

/** `npm run admin -- <command> [--option value]…`: see `runAdmin` for where it runs. */
async function main(argv: string[]): Promise<number> {
  const program = new Command('admin').description('Operator commands for the svc control plane');
  let outcome: AdminOutcome | undefined;
  let output = { json: false, terminal: false, list: false };
  let scriptExit: number | undefined;
  registerImageCommands(program, (code) => {
    scriptExit = code;
  });
  for (const [name, entry] of Object.entries(adminCommands)) {
    // "agent token" is the subcommand `token` of a group `agent`.
    const [group, sub] = name.split(' ');
    const parent = sub
      ? (program.commands.find((c) => c.name() === group) ??
        program.command(group as string).description(GROUPS[group as string] ?? ''))
      : program;
    const cmd = parent.command(sub ?? name).description(entry.summary);
    const shape = (entry.args as { shape?: Record<string, { description?: string }> }).shape ?? {};
    for (const position of entry.positional ?? []) cmd.argument(`[${position}]`);
    for (const [key, field] of Object.entries(shape)) {
      if (entry.flags?.includes(key)) cmd.option(`--${key}`, field.description ?? key);
      else cmd.option(`--${key} <value>`, field.description ?? key);
    }
    cmd.option('--json', 'print the answer as JSON (the default when stdout is not a terminal)');
    cmd.action(async (...received: unknown[]) => {
      const positional = entry.positional ?? [];
      const { json, ...options } = received[positional.length] as Record<string, unknown>;
      output = {
        json: json === true,
        terminal: process.stdout.isTTY === true,
        list: entry.list === true,
      };
      const args: Record<string, string> = Object.fromEntries(
        Object.entries(options).map(([key, value]) => [key, String(value)]),
      );
      positional.forEach((key, i) => {
        if (received[i] !== undefined) args[key] = received[i] as string;
      });
      outcome = await runAdmin(process.env, name, args);
    });
  }
  await program.parseAsync(argv, { from: 'user' });
  if (scriptExit !== undefined) return scriptExit;
  if (!outcome) return 0;
  if ('error' in outcome) {
    const issues = (outcome.issues ?? []).map(
      (issue) => `${issue.path.join('.')}: ${issue.message}`,
    );
    const why = outcome.detail ?? (issues.join('; ') || undefined);
    const fallback = outcome.error === 'internal_error' ? 'see the service log' : undefined;
    console.error(`${outcome.error}: ${why ?? fallback ?? outcome.error}`);
    return 1;
  }
  console.log(formatResult(outcome.result, output));
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const known = error instanceof ConfigError || error instanceof NoDataDirError;
    console.error(known ? error.message : error);
    process.exitCode = 1;
  },
);
