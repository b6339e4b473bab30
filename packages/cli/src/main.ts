import { Command, CommanderError } from 'commander';
import { type CommandEntry, commands } from './commands/index.js';
import { CLI_VERSION } from './version.js';

export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  /** Asks the user a question (absent when nobody can answer: tests, pipes). */
  readonly prompt?: (question: string) => Promise<string>;
  /** Progress redraws one line on a terminal, else prints a line per step. */
  readonly isTty?: boolean;
  /** How the CLI reaches the service (tests pass the in-memory app's). */
  readonly fetch?: typeof fetch;
}

/** Runs `svc` with these arguments and returns the exit code; never exits the process itself. */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const program = new Command('svc')
    .description('The on-VM CLI of the svc control plane')
    .version(CLI_VERSION)
    .exitOverride()
    // A mistyped command or option says where the usage is (subcommands inherit it).
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    });
  let exitCode = 0;
  try {
    // Only the command that runs is loaded; the others are listed by name (see CommandEntry).
    const wanted = invokedCommand(argv);
    const stubs = new Map<Command, string>();
    for (const entry of commands) {
      if (entry === wanted) {
        (await entry.load()).register(program, io, (code) => {
          exitCode = code;
        });
      } else {
        const stub = program.command(entry.name).description(entry.description);
        stubs.set(stub, `${entry.name} ${entry.usage}`.trim());
      }
    }
    const defaultTerm = program.createHelp().subcommandTerm;
    program.configureHelp({
      subcommandTerm: (cmd) => stubs.get(cmd) ?? defaultTerm.call(program.createHelp(), cmd),
    });
    // `--version` everywhere, as `--help` is (after `--help`: a command's own words first).
    for (const command of descendants(program)) {
      if (!stubs.has(command)) command.version(CLI_VERSION);
    }
    if (argv.length === 0) {
      io.stdout.write(program.helpInformation());
      return 0;
    }
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    // The one place failures are printed: commands throw, and every failure becomes one line
    // (an `ApiError` already names the code and the service's reason), never a stack trace.
    io.stderr.write(`svc: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

/** The top-level command these arguments run (`svc help <command>` included), if any. */
function invokedCommand(argv: readonly string[]): CommandEntry | undefined {
  const [first, second] = argv.filter((arg) => !arg.startsWith('-'));
  const name = first === 'help' ? second : first;
  return commands.find((entry) => entry.name === name);
}

function* descendants(command: Command): Generator<Command> {
  for (const child of command.commands) {
    yield child;
    yield* descendants(child);
  }
}
