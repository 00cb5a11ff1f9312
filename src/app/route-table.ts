/**
 * The route table derived from the generated resources: every list/create/edit/show path and every
 * extra route, with its roles, its title key and whether its screen is built. Plain data (no
 * React elements), so the end-to-end route-table test reads the same table the SPA renders.
 */
import { operations, type Operation } from '@/generated/api';
import { resourceList } from '@/generated/resources';
import type { Role } from '@/generated/types';
import { routeBuilt } from '@/resources/actions/available-actions';
import { bespokeBuilt, bespokePages, enginePages } from './pages';

export interface DerivedRoute {
  resource: string;
  /** list, create, edit, show or an extra route kind (viewer, videowall...) */
  kind: string;
  path: string;
  roles: readonly Role[] | null;
  titleKey: string;
  /** false while its screen or operations are not built: the route then shows not found */
  built: boolean;
}

/** Every route of every resource, with whether its screen is built. */
export function deriveRoutes(): DerivedRoute[] {
  const routes: DerivedRoute[] = [];
  for (const resource of resourceList) {
    const paths: Record<string, string | undefined> = {
      list: resource.list,
      create: resource.create,
      edit: resource.edit,
      show: resource.show,
      ...resource.meta.extraRoutes,
    };
    for (const [kind, path] of Object.entries(paths)) {
      if (!path) continue;
      const bespoke = bespokePages[resource.name]?.[kind];
      const engine = kind in resource.meta.forms ? 'form' : kind;
      // A form route's preview is part of its screen: it is built when that read is too.
      const preview = resource.meta.forms[kind]?.preview;
      // A bespoke screen that names its own operations is built when they are.
      const built =
        (!!bespoke || engine in enginePages) &&
        (bespokeBuilt(resource.name, kind) ?? routeBuilt(resource.name, kind)) &&
        (!preview ||
          (operations as Readonly<Record<string, Operation>>)[`${resource.name}.${preview}`]
            ?.planned === false);
      routes.push({
        built,
        resource: resource.name,
        kind,
        path,
        roles: resource.meta.roles,
        titleKey: built ? `resources:${resource.name}.actions.${kind}` : 'common:routes.not_found',
      });
    }
  }
  return routes;
}
