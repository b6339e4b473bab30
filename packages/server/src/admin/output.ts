/**
 * How the CLI prints an answer: JSON for scripts (`--json`, or whenever stdout is no terminal, as
 * it always did), readable text for a person at a terminal: a table for a list, `key: value`
 * lines for an object. A message (text) prints as it is, unless `--json` asks for JSON.
 */
export function formatResult(
  result: unknown,
  options: { readonly json: boolean; readonly terminal: boolean; readonly list?: boolean },
): string {
  if (typeof result === 'string' && !options.json) return result;
  if (options.json || !options.terminal) return JSON.stringify(result, null, 2);
  if (options.list && Array.isArray(result)) {
    return result.length === 0 ? '(none)' : formatTable(result as Record<string, unknown>[]);
  }
  if (result !== null && typeof result === 'object' && !Array.isArray(result)) {
    const entries = Object.entries(result);
    const width = Math.max(...entries.map(([key]) => key.length));
    return entries.map(([key, value]) => `${`${key}:`.padEnd(width + 3)}${cell(value)}`).join('\n');
  }
  return JSON.stringify(result, null, 2);
}

/** Rows as aligned columns under a header of their keys (the first row's, in its order). */
export function formatTable(rows: readonly Record<string, unknown>[]): string {
  const columns = Object.keys(rows[0] ?? {});
  const cells = [columns, ...rows.map((row) => columns.map((column) => cell(row[column])))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => (line[i] ?? '').length)));
  return cells
    .map((line) =>
      line
        .map((value, i) => value.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'string') return value.replace(/\s+/g, ' ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
