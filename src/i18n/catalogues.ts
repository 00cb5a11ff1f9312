/**
 * The catalogues: `locales/<code>/<namespace>.json`, one lazily loaded chunk per file. Loading
 * one twice fetches it once (the browser keeps each module).
 */
import { DEFAULT_LANGUAGE, type Language, type Namespace } from './languages';

type Catalogue = { default: Record<string, unknown> };

const loaders = import.meta.glob<Catalogue>('../../locales/*/*.json');

/** Loads one catalogue; null when the language has no such file. */
export function loadCatalogue(language: string, namespace: string): Promise<Catalogue> | null {
  return loaders[`../../locales/${language}/${namespace}.json`]?.() ?? null;
}

/**
 * Starts loading the catalogues a first render needs (the language's and English, the fallback
 * of every key a locale lacks) before the code that will ask for them has evaluated. A failure
 * here is seen by that code, which asks again.
 */
export function preloadCatalogues(language: Language, namespaces: readonly Namespace[]): void {
  for (const code of new Set([language, DEFAULT_LANGUAGE]))
    for (const namespace of namespaces) loadCatalogue(code, namespace)?.catch(() => undefined);
}
