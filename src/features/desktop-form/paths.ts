/** Route builders of the desktop form (the spec's edit route has no parameter: the id is in the query). */
import { resources } from '@/generated/resources';

const desktops = resources.find((resource) => resource.name === 'desktops');

export const DESKTOPS_PATH = desktops?.list ?? '/desktops';
export const NEW_DESKTOP_PATH = desktops?.create ?? '/desktops/new';

/** `/domain/edit?id=<desktopId>`. */
export function editDesktopPath(id: string): string {
  return `${desktops?.edit ?? '/domain/edit'}?${new URLSearchParams({ id }).toString()}`;
}
