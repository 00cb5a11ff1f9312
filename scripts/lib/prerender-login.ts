/**
 * The build step that draws the login form into the page (a Vite plugin, after the SPA's build):
 * `src/app/login-prerender.tsx` is built for Node and renders the form in every offered
 * language, without and with the category choice (whose options the server fills in); each lands
 * in a copy of the built index.html (`common/prerendered-login.ts` names the
 * files), with the page's first script (`static-login-boot.ts`, built on its own into the assets)
 * in its head. The server answers `/login` with the visitor's language's page.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build as esbuild } from 'esbuild';
import { build, type Plugin } from 'vite';
import { escapeHtml } from '../../common/html.ts';
import { prerenderedLoginFile, STATIC_LOGIN_ID } from '../../common/prerendered-login.ts';

interface PrerenderModule {
  LANGUAGES: readonly string[];
  renderLogin(
    language: string,
    catalogues: Record<string, Record<string, unknown>>,
    withCategories: boolean,
  ): { html: string; title: string; lang: string };
}

const ENTRY = 'src/app/login-prerender.tsx';
const BOOT = 'src/features/auth/static-login-boot.ts';
const FALLBACK = 'en';

/** Replaces the one `pattern` of `html`, failing the build when the page no longer has it. */
function replaceOnce(html: string, pattern: RegExp, by: string): string {
  if (!pattern.test(html)) throw new Error(`prerender-login: index.html lacks ${pattern}`);
  return html.replace(pattern, by);
}

/**
 * One language's page: the built index.html with the document's language and title, the boot
 * script first in the head and the drawn form beside the SPA's root.
 */
export function loginPage(
  index: string,
  drawn: { html: string; title: string; lang: string },
  bootSrc: string,
): string {
  let page = replaceOnce(index, /<html lang="[^"]*">/, `<html lang="${escapeHtml(drawn.lang)}">`);
  page = replaceOnce(page, /<title>[^<]*<\/title>/, `<title>${escapeHtml(drawn.title)}</title>`);
  page = replaceOnce(page, /<\/head>/, `  <script src="${bootSrc}"></script>\n  </head>`);
  return replaceOnce(
    page,
    /<div id="root"><\/div>/,
    `<div id="${STATIC_LOGIN_ID}">${drawn.html}</div><div id="root"></div>`,
  );
}

export function prerenderLogin(): Plugin {
  let root = '';
  let outDir = '';
  let assetsDir = '';
  let base = '/';
  let configFile: string | undefined;
  return {
    name: 'prerender-login',
    apply: (_config, env) => env.command === 'build' && !env.isSsrBuild,
    configResolved(config) {
      root = config.root;
      outDir = resolve(root, config.build.outDir);
      assetsDir = config.build.assetsDir;
      base = config.base;
      configFile = config.configFile;
    },
    async closeBundle(error) {
      // A failed build has no page to draw the form into: its own error is the one to show.
      if (error) return;
      const work = join(root, 'node_modules', '.cache', 'prerender-login');
      rmSync(work, { recursive: true, force: true });
      await build({
        configFile,
        root,
        logLevel: 'warn',
        build: {
          ssr: ENTRY,
          outDir: work,
          emptyOutDir: true,
          manifest: false,
          rollupOptions: { output: { entryFileNames: 'login-prerender.mjs' } },
        },
      });
      const module = (await import(
        pathToFileURL(join(work, 'login-prerender.mjs')).href
      )) as PrerenderModule;

      const boot = await esbuild({
        entryPoints: [join(root, BOOT)],
        bundle: true,
        format: 'iife',
        minify: true,
        target: 'es2020',
        write: false,
        alias: { '@common': join(root, 'common') },
      });
      const bootCode = boot.outputFiles[0]?.contents;
      if (!bootCode) throw new Error('prerender-login: the boot script built to nothing');
      const hash = createHash('sha256').update(bootCode).digest('base64url').slice(0, 8);
      const bootFile = `${assetsDir}/login-boot-${hash}.js`;
      writeFileSync(join(outDir, bootFile), bootCode);

      const index = readFileSync(join(outDir, 'index.html'), 'utf8');
      const catalogue = (language: string): Record<string, unknown> =>
        JSON.parse(readFileSync(join(root, 'locales', language, 'common.json'), 'utf8')) as Record<
          string,
          unknown
        >;
      const fallback = catalogue(FALLBACK);
      for (const language of module.LANGUAGES) {
        const catalogues = { [FALLBACK]: fallback, [language]: catalogue(language) };
        for (const withCategories of [false, true]) {
          const drawn = module.renderLogin(language, catalogues, withCategories);
          const file = join(outDir, prerenderedLoginFile(language, withCategories));
          mkdirSync(dirname(file), { recursive: true });
          writeFileSync(file, loginPage(index, drawn, `${base}${bootFile}`));
        }
      }
      rmSync(work, { recursive: true, force: true });
    },
  };
}
