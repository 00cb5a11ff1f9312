/** Loading the application: its module and every catalogue it renders with, together. */
import { loadAllNamespaces } from '@/i18n/i18n';

/** The application's module, once it and all its catalogues are loaded. */
export function loadApp(): Promise<typeof import('./app')> {
  return Promise.all([import('./app'), loadAllNamespaces()]).then(([module]) => module);
}
