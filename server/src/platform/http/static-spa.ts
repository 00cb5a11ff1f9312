/**
 * The built SPA from dist/ (@fastify/static) with a history fallback: `/`, and any non-API GET or
 * HEAD that accepts HTML and matches no file (a page route such as /desktops/x, or a directory),
 * gets dist/index.html with `cache-control: no-cache`. Hashed files under dist/assets are
 * immutable; every other file revalidates. `.br`/`.gz` siblings of a file are sent as they are when
 * the client accepts them; otherwise text files are compressed on the fly (compress.ts).
 * /api/* and /authentication/* never get the SPA: they answer JSON. Not registered when dist/ has
 * not been built.
 * `/login`, and an anonymous visit (no session cookie) to a page the SPA's session guard protects
 * (`/` among them, which the SPA sends to the login page), get the page the build drew the login
 * form into, in the visitor's language (the language cookie, else Accept-Language, else
 * English), so the form shows before the SPA's script has loaded; index.html when the build has
 * none. A portal with several categories gets the page with the category choice, its options the
 * categories the login form offers.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import fastifyStatic from '@fastify/static';
import { hasSessionCookie, isGuardedPath, LOGIN_PATH } from '../../../../common/entry-paths.ts';
import { CATEGORY_OPTIONS, prerenderedLoginFile } from '../../../../common/prerendered-login.ts';
import { requestLanguage } from '../lib/languages.ts';
import { escapeHtml } from '../../../../common/html.ts';
import { globalPlugin } from '../lib/plugin.ts';

const isApiPath = (path: string) =>
  path === '/api' ||
  path.startsWith('/api/') ||
  path === '/authentication' ||
  path.startsWith('/authentication/');

const FALLBACK_LANGUAGE = 'en';

const etagOf = (body: Buffer) =>
  `"${createHash('sha1').update(body).digest('base64url').slice(0, 27)}"`;

interface PageFile {
  mtimeMs: number;
  size: number;
  body: Buffer;
  etag: string;
}

const plugin: FastifyPluginAsync = async (app) => {
  const root = app.config.distDir;
  const indexPath = join(root, 'index.html');
  if (!existsSync(indexPath)) {
    app.log.info({ root }, 'no built SPA found; serving the API only');
    return;
  }
  const assetsDir = join(root, 'assets');

  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    wildcard: true,
    index: false,
    preCompressed: true,
    // a directory is not a file: `/assets/` falls back like a page route
    allowedPath: (pathname) => !pathname.endsWith('/'),
    setHeaders: (reply, path) => {
      reply.header(
        'cache-control',
        path.startsWith(`${assetsDir}/`) ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
    },
  });

  // A page is read again only when the build replaced it.
  const pages = new Map<string, PageFile>();
  async function pageFile(path: string): Promise<PageFile> {
    const info = await stat(path);
    const cached = pages.get(path);
    if (cached?.mtimeMs === info.mtimeMs && cached.size === info.size) return cached;
    const body = await readFile(path);
    const page = { mtimeMs: info.mtimeMs, size: info.size, body, etag: etagOf(body) };
    pages.set(path, page);
    return page;
  }

  /**
   * The page a page route answers: the login page drawn in the request's language (or English)
   * on the login path or an anonymous visit to a guarded path, when the build drew it; else
   * index.html.
   */
  async function page(request: FastifyRequest): Promise<{ body: Buffer; etag: string }> {
    const path = request.url.split('?')[0] ?? '/';
    const login =
      path === LOGIN_PATH || (isGuardedPath(path) && !hasSessionCookie(request.headers.cookie));
    if (!login) return pageFile(indexPath);
    // The categories the login form offers (the directory's, when the portal has it). The page
    // comes without the choice when they cannot be read: the database being down is no reason
    // not to draw the login page (the form's own read then says what is wrong).
    const categories = app.hasDecorator('users')
      ? await app.users.categories().catch((err: unknown) => {
          request.log.warn({ err }, 'login page drawn without its categories');
          return [];
        })
      : [];
    const choice = categories.length > 1;
    const drawn = drawnLoginPath(request, choice) ?? drawnLoginPath(request, false);
    if (!drawn) return pageFile(indexPath);
    const file = await pageFile(drawn.path);
    if (!drawn.choice) return file;
    const options = categories
      .map(({ id, name }) => `<option value="${escapeHtml(id)}">${escapeHtml(name)}</option>`)
      .join('');
    const body = Buffer.from(file.body.toString('utf8').replace(CATEGORY_OPTIONS, options));
    return { body, etag: etagOf(body) };
  }

  function drawnLoginPath(
    request: FastifyRequest,
    choice: boolean,
  ): { path: string; choice: boolean } | undefined {
    const language = requestLanguage(request.headers.cookie, request.headers['accept-language']);
    for (const code of [language, FALLBACK_LANGUAGE]) {
      const path = code ? join(root, prerenderedLoginFile(code, choice)) : undefined;
      if (path && existsSync(path)) return { path, choice };
    }
    return undefined;
  }

  async function sendPage(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    try {
      const index = await page(request);
      void reply
        .code(200)
        // the page differs by session cookie and language: a cache keeps one per cookie and header
        .header('vary', 'cookie, accept-language')
        .header('cache-control', 'no-cache')
        .header('etag', index.etag)
        .type('text/html; charset=utf-8');
      const known = (request.headers['if-none-match'] ?? '')
        .split(',')
        .map((tag) => tag.trim().replace(/^W\//, ''));
      if (known.includes(index.etag)) {
        void reply.code(304).send();
        return;
      }
      // The not-found path has no compression hook of its own: compress through the reply when
      // the request came in through a route (the static wildcard) that provides it.
      if (typeof reply.compress === 'function') void reply.compress(index.body);
      else void reply.send(index.body);
    } catch (err) {
      void reply.send(err);
    }
  }

  app.get('/', async (request, reply) => {
    await sendPage(request, reply);
    return reply;
  });

  app.spaFallback = (request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    if (request.method !== 'GET' && request.method !== 'HEAD') return false;
    if (isApiPath(path)) return false;
    if (!(request.headers.accept ?? '').includes('text/html')) return false;
    void sendPage(request, reply);
    return true;
  };
};

export default globalPlugin(plugin, 'static-spa');
