import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { RESERVED_SLUGS } from '@svc/contract';
import type { Context, Hono } from 'hono';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import type { AppEnv } from '../http/app-env.js';
import { readSessionCookie } from '../http/session-cookie.js';
import { requireWellFormedText } from '../http/well-formed-text.js';
import { directoryPage, filePage, versionPage } from './bundle-pages.html.js';
import { notFoundPage, type Reader } from './page-layout.html.js';
import { renderReadme } from './readme.js';

/** Files up to this size are shown inline on their page (as escaped text). */
const MAX_INLINE_BYTES = 512 * 1024;

const looksBinary = (bytes: Buffer) => bytes.subarray(0, 8000).includes(0);

/** Who reads a public page, as far as its header cares: the cookie is only looked at. */
export const readerOf = (c: Context, secureCookies: boolean): Reader => ({
  hasSession: readSessionCookie(c, secureCookies) !== undefined,
});

/**
 * The public pages: server-rendered HTML, readable without script. They are mounted after every
 * other route, and a first segment that is one of the service's own (`api`, `dashboard`, …) is
 * passed on, so these two-segment routes never shadow the API or the dashboard.
 */
export function mountBundlePages(app: Hono<AppEnv>, ctx: AppContext) {
  const { catalog } = ctx.bundles;
  const reader = (c: Context<AppEnv>) => readerOf(c, ctx.config.http.secureCookies);
  const notFound = (c: Context<AppEnv>) => c.html(notFoundPage(reader(c)), 404);

  /** Runs a page handler; a reserved first segment falls through, an unknown bundle is a 404 page. */
  const page =
    (handler: (c: Context<AppEnv>) => Promise<Response>) =>
    async (c: Context<AppEnv>, next: () => Promise<void>) => {
      if (RESERVED_SLUGS.has(c.req.param('accountSlug') ?? '')) return next();
      // The address is looked up in the database, which takes only well-formed text.
      requireWellFormedText(c);
      try {
        return await handler(c);
      } catch (error) {
        if (error instanceof AppError && error.code === 'not_found') return notFound(c);
        throw error;
      }
    };
  const versionParam = (c: Context<AppEnv>) => {
    const raw = c.req.param('version') ?? '';
    const version = /^[1-9][0-9]{0,8}$/.test(raw) ? Number(raw) : undefined;
    if (version === undefined) throw new AppError('not_found');
    return version;
  };
  const render = async (c: Context<AppEnv>, version?: number) => {
    const { accountSlug = '', name = '' } = c.req.param();
    const found = await catalog.getVersion(accountSlug, name, version);
    const html = versionPage({
      reader: reader(c),
      detail: found.detail,
      version: found.version.version,
      files: found.files,
      ...(found.readme !== undefined && { readmeHtml: renderReadme(found.readme) }),
    });
    return c.html(html);
  };

  app.get(
    '/:accountSlug/:name',
    page((c) => render(c)),
  );
  app.get(
    '/:accountSlug/:name/versions/:version',
    page((c) => render(c, versionParam(c))),
  );

  app.get(
    '/:accountSlug/:name/versions/:version/download',
    page(async (c) => {
      const { accountSlug = '', name = '' } = c.req.param();
      const version = versionParam(c);
      const object = await catalog.openObject(accountSlug, name, version, null);
      if (!object) return notFound(c);
      return new Response(Readable.toWeb(object.stream) as ReadableStream, {
        headers: {
          'content-type': 'application/gzip',
          'content-length': String(object.size),
          'content-disposition': `attachment; filename="${name}-v${version}.tar.gz"`,
          'x-content-type-options': 'nosniff',
        },
      });
    }),
  );

  app.get(
    '/:accountSlug/:name/versions/:version/files/:path{.+}',
    page(async (c) => {
      const { accountSlug = '', name = '', path = '' } = c.req.param();
      const version = versionParam(c);
      const object = await catalog.openObject(accountSlug, name, version, path);
      if (!object) {
        // Not a file: a folder of the version, if some file lies below it.
        const dir = path.replace(/\/+$/, '');
        const found = await catalog.getVersion(accountSlug, name, version);
        if (!dir || !found.files.some((f) => f.path.startsWith(`${dir}/`))) return notFound(c);
        return c.html(
          directoryPage({
            reader: reader(c),
            detail: found.detail,
            version,
            dir,
            files: found.files,
          }),
        );
      }
      if (c.req.query('raw') !== undefined) {
        // Raw bytes are a download, never a page: user HTML or SVG must not run on this origin.
        return new Response(Readable.toWeb(object.stream) as ReadableStream, {
          headers: {
            'content-type': 'application/octet-stream',
            'content-length': String(object.size),
            'content-disposition': 'attachment',
            'x-content-type-options': 'nosniff',
          },
        });
      }
      let content: string | undefined;
      if (object.size <= MAX_INLINE_BYTES) {
        const bytes = await buffer(object.stream);
        if (!looksBinary(bytes)) content = bytes.toString('utf8');
      } else object.stream.destroy();
      const { detail } = await catalog.getVersion(accountSlug, name, version);
      return c.html(
        filePage({
          reader: reader(c),
          detail,
          version,
          path,
          size: object.size,
          ...(content !== undefined && { content }),
        }),
      );
    }),
  );
}
