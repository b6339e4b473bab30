/** The file an OpenClaw home reads its credentials from; `stage` leaves `KEY=${KEY}` there. */
export const OPENCLAW_ENV = '.openclaw/.env';

const ENV_LINE = /^(\s*(?:export\s+)?)([A-Za-z_][A-Za-z0-9_.-]*)(\s*=\s*)/;

/**
 * A value as a dotenv line takes it literally: in the first quote it does not hold (`'` and
 * backticks take everything up to their match; `"` only expands escapes the value cannot hold,
 * as it is one line). `CredentialValue` refuses values holding all three.
 */
function quoted(value: string): string {
  const quote = ["'", '`', '"'].find((q) => !value.includes(q));
  if (!quote) throw new Error('a credential value holds every quote character');
  return `${quote}${value}${quote}`;
}

/**
 * `text` (an env file, possibly empty) with each key's line set to its value: a line naming the
 * key (the placeholder `stage` left) is replaced, other keys are appended; every other line stays.
 */
export function setEnvValues(text: string, values: Readonly<Record<string, string>>): string {
  const left = new Map(Object.entries(values));
  const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
  const set = lines.map((line) => {
    const match = ENV_LINE.exec(line);
    const key = match?.[2];
    if (!match || key === undefined || !left.has(key)) return line;
    const value = left.get(key) as string;
    left.delete(key);
    return `${match[1]}${key}${match[3]}${quoted(value)}`;
  });
  for (const [key, value] of left) set.push(`${key}=${quoted(value)}`);
  return `${set.join('\n')}\n`;
}
