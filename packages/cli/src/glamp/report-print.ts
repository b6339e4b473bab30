import type { BundleCredential, ScanFlag } from '@svc/contract';

export const formatBytes = (bytes: number) =>
  bytes < 1000
    ? `${bytes} B`
    : bytes < 1e6
      ? `${(bytes / 1e3).toFixed(1)} kB`
      : `${(bytes / 1e6).toFixed(1)} MB`;

export const formatFlags = (flags: readonly ScanFlag[]) =>
  flags.map((f) => `  ${f.file}:${f.line}  ${f.rule}\n`).join('');

/** The staging report as `stage` prints it: never a secret's value, only where and which rule. */
export function formatReport(report: {
  fileCount: number;
  totalBytes: number;
  byExtension: readonly { extension: string; count: number; bytes: number }[];
  flags: readonly ScanFlag[];
  credentials: readonly BundleCredential[];
  tarball: { size: number; sha256: string };
  skippedLinks?: readonly string[];
  unscanned?: readonly string[];
  ignoreWarnings?: readonly string[];
}): string {
  const lines: string[] = [
    `Staged ${report.fileCount} files, ${formatBytes(report.totalBytes)}; tarball ${formatBytes(report.tarball.size)} (sha256 ${report.tarball.sha256.slice(0, 12)}…)`,
    'By extension:',
    ...report.byExtension.map(
      (e) =>
        `  ${e.extension.padEnd(12)} ${String(e.count).padStart(6)} files  ${formatBytes(e.bytes).padStart(9)}`,
    ),
  ];
  if (report.credentials.length > 0) {
    lines.push('Credentials replaced by placeholders (listed in the manifest):');
    for (const c of report.credentials) lines.push(`  ${c.key}  (${c.locations.join(', ')})`);
  }
  if (report.flags.length > 0) {
    lines.push(
      `Flags: ${report.flags.length} possible secrets stay in the bundle unless you remove or exclude them (.bundleignore) and stage again:`,
    );
    lines.push(formatFlags(report.flags).trimEnd());
  } else lines.push('Flags: none');
  if (report.skippedLinks?.length)
    lines.push(`Symlinks left out: ${report.skippedLinks.join(', ')}`);
  for (const warning of report.ignoreWarnings ?? []) {
    lines.push(`Warning: ${warning}: "**" next to other characters may not match as git does`);
  }
  if (report.unscanned?.length)
    lines.push(`Not scanned (binary or over 10 MB): ${report.unscanned.length} files`);
  return `${lines.join('\n')}\n`;
}
