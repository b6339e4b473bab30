import type { BundleDetail } from '@svc/contract';
import { escapeHtml } from '../util/escape-html.js';
import { formatTime, layout, type Reader } from './page-layout.html.js';

const pathUrl = (...segments: string[]) => `/${segments.map(encodeURIComponent).join('/')}`;
const filePathUrl = (base: string, path: string) =>
  `${base}/files/${path.split('/').map(encodeURIComponent).join('/')}`;

export const formatBytes = (bytes: number) =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 ** 2
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;

interface VersionPageInput {
  readonly reader: Reader;
  readonly detail: BundleDetail;
  readonly version: number;
  readonly files: readonly { path: string; size: string | number }[];
  /** Already sanitized HTML. */
  readonly readmeHtml?: string;
}

/** Files shown on the page itself; the file routes reach every one. */
const MAX_LISTED_FILES = 2000;

export function versionPage({
  reader,
  detail,
  version,
  files,
  readmeHtml,
}: VersionPageInput): string {
  const base = `${pathUrl(detail.accountSlug, detail.name)}/versions/${version}`;
  const isLatest = version === detail.latestVersion;
  // The dashboard's adopt form; without `version` it picks the latest, so only older pages name one.
  const adopt = `/dashboard/adopt${pathUrl(detail.accountSlug, detail.name)}${isLatest ? '' : `?version=${version}`}`;
  const tags = detail.tags.map((t) => `<li>${escapeHtml(t)}</li>`).join('');
  const credentials = detail.credentials.length
    ? `<ul class="credentials">${detail.credentials
        .map(
          (c) =>
            `<li><code>${escapeHtml(c.key)}</code> ${escapeHtml(c.description)}${
              c.locations.length
                ? ` <small>(${c.locations.map(escapeHtml).join(', ')})</small>`
                : ''
            }</li>`,
        )
        .join('')}</ul>`
    : '<p>No credentials needed.</p>';
  const fileRows = files
    .slice(0, MAX_LISTED_FILES)
    .map(
      (f) =>
        `<tr><td><a href="${escapeHtml(filePathUrl(base, f.path))}">${escapeHtml(f.path)}</a></td><td>${formatBytes(Number(f.size))}</td></tr>`,
    )
    .join('\n');
  const more =
    files.length > MAX_LISTED_FILES
      ? `<p>and ${files.length - MAX_LISTED_FILES} more files.</p>`
      : '';
  const versions = detail.versions
    .map(
      (v) =>
        `<li><a href="${escapeHtml(`${pathUrl(detail.accountSlug, detail.name)}/versions/${v.version}`)}">version ${v.version}</a> <span class="muted">${formatTime(v.createdAt)}, ${v.fileCount} files</span></li>`,
    )
    .join('');
  return layout(
    reader,
    `${detail.displayName} · ${detail.accountSlug}/${detail.name}`,
    `<header>
<h1>${escapeHtml(detail.displayName)}</h1>
<p class="address">${escapeHtml(`${detail.accountSlug}/${detail.name}`)} · version ${version}${isLatest ? ' (latest)' : ''}</p>
<p class="description">${escapeHtml(detail.description)}</p>
<ul class="tags">${tags}</ul>
<p class="actions"><a class="adopt" href="${escapeHtml(adopt)}">Adopt this bundle</a> <a href="${escapeHtml(`${base}/download`)}">Download the tarball</a></p>
</header>
<section><h2>Credentials</h2>${credentials}</section>
<section class="readme"><h2>README</h2>${readmeHtml ?? '<p>This bundle has no README.md.</p>'}</section>
<section><h2>Files</h2><table class="files"><thead><tr><th>Path</th><th>Size</th></tr></thead><tbody>
${fileRows}
</tbody></table>${more}</section>
<section><h2>Versions</h2><ul class="versions">${versions}</ul></section>`,
  );
}

export function filePage(input: {
  reader: Reader;
  detail: BundleDetail;
  version: number;
  path: string;
  content?: string;
  size: number;
}): string {
  const base = `${pathUrl(input.detail.accountSlug, input.detail.name)}/versions/${input.version}`;
  const raw = `${filePathUrl(base, input.path)}?raw=1`;
  const body =
    input.content === undefined
      ? `<p>Binary or large file (${formatBytes(input.size)}).</p>`
      : `<pre>${escapeHtml(input.content)}</pre>`;
  return layout(
    input.reader,
    `${input.path} · ${input.detail.accountSlug}/${input.detail.name}`,
    `<p><a href="${escapeHtml(base)}">${escapeHtml(`${input.detail.displayName} version ${input.version}`)}</a></p>
<h1>${escapeHtml(input.path)}</h1>
<p><a href="${escapeHtml(raw)}">Raw</a> · ${formatBytes(input.size)}</p>
${body}`,
  );
}

/** One folder of a version: its immediate subfolders and files, each a link. */
export function directoryPage(input: {
  reader: Reader;
  detail: BundleDetail;
  version: number;
  dir: string;
  files: readonly { path: string; size: string | number }[];
}): string {
  const base = `${pathUrl(input.detail.accountSlug, input.detail.name)}/versions/${input.version}`;
  const prefix = `${input.dir}/`;
  const folders = new Set<string>();
  const here: { name: string; size: number }[] = [];
  for (const f of input.files) {
    if (!f.path.startsWith(prefix)) continue;
    const rest = f.path.slice(prefix.length);
    const slash = rest.indexOf('/');
    if (slash === -1) here.push({ name: rest, size: Number(f.size) });
    else folders.add(rest.slice(0, slash));
  }
  const rows = [
    ...[...folders]
      .sort()
      .map(
        (d) =>
          `<li><a href="${escapeHtml(filePathUrl(base, `${prefix}${d}`))}">${escapeHtml(d)}/</a></li>`,
      ),
    ...here.map(
      (f) =>
        `<li><a href="${escapeHtml(filePathUrl(base, `${prefix}${f.name}`))}">${escapeHtml(f.name)}</a> ${formatBytes(f.size)}</li>`,
    ),
  ].join('\n');
  return layout(
    input.reader,
    `${input.dir}/ · ${input.detail.accountSlug}/${input.detail.name}`,
    `<p><a href="${escapeHtml(base)}">${escapeHtml(`${input.detail.displayName} version ${input.version}`)}</a></p>
<h1>${escapeHtml(input.dir)}/</h1>
<ul class="directory">${rows}</ul>`,
  );
}
