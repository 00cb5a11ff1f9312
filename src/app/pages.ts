/**
 * The screens behind the generated routes: the resource engine's list, details and form pages
 * for every resource, and the bespoke screens (viewers, bookings, planning, videowall) by
 * resource and route kind. Every page is a lazy chunk.
 */
import { lazy, type ComponentType } from 'react';
import { preloadableLazy } from '@/lib/preloadable-lazy';
import { hasStoredSession } from '@/lib/token';
import { LOGIN_PATH } from '@/providers/auth-provider';
import { operations, type Operation } from '@/generated/api';

export interface PageProps {
  resource: string;
  /** The route kind (list, create, an extra route...). */
  kind: string;
}

type Page = ComponentType<PageProps>;

/**
 * The engine's list, where every role lands after the login: its chunk was fetched while the
 * user typed, and it is marked loaded as soon as this module runs (on the login page or with a
 * session), so the first list renders without a fallback. A visitor of a page without login (a
 * direct viewer link) does not load it.
 */
const listPage = preloadableLazy(() =>
  import('@/resources/list/resource-list-page').then((m) => m.ResourceListPage),
);
if (
  typeof window !== 'undefined' &&
  (window.location.pathname === LOGIN_PATH || hasStoredSession())
)
  void listPage.preload();

/** The engine's screen of each generic route kind. */
export const enginePages: Readonly<Record<string, Page>> = {
  list: listPage,
  show: lazy(() =>
    import('@/resources/show/resource-show-page').then((m) => ({ default: m.ResourceShowPage })),
  ),
  /** The details page with the dialog of the action named by `:action` open (a deep link). */
  action: lazy(() =>
    import('@/resources/show/resource-show-page').then((m) => ({ default: m.ResourceShowPage })),
  ),
  create: lazy(() => import('./form-pages').then((m) => ({ default: m.CreatePage }))),
  edit: lazy(() => import('./form-pages').then((m) => ({ default: m.EditPage }))),
  /** Extra routes that are an operation's form (`x-resource.forms`). */
  form: lazy(() => import('./form-pages').then((m) => ({ default: m.OperationFormPage }))),
};

/** Bespoke screens by resource and route kind; they win over the engine's. */
export const bespokePages: Readonly<Record<string, Readonly<Record<string, Page>>>> = {
  desktops: {
    viewer: lazy(() =>
      import('@/features/viewers/vnc-viewer-page').then((m) => ({ default: m.VncViewerPage })),
    ),
  },
  bookings: {
    list: lazy(() =>
      import('@/features/bookings/bookings-page').then((m) => ({ default: m.BookingsPage })),
    ),
    show: lazy(() =>
      import('@/features/bookings/bookings-page').then((m) => ({ default: m.BookingsPage })),
    ),
  },
  planning: {
    list: lazy(() =>
      import('@/features/planning/planning-page').then((m) => ({ default: m.PlanningPage })),
    ),
  },
  deployments: {
    videowall: lazy(() =>
      import('@/features/videowall/videowall-page').then((m) => ({ default: m.VideowallPage })),
    ),
  },
  // The public direct-viewer page, with the VNC console of the viewers feature (loaded on Open),
  // and the browser RDP viewer (a page without login: it reads the viewer cookie).
  'direct-viewer': {
    rdp: lazy(() =>
      import('@/features/viewers/rdp-viewer-page').then((m) => ({ default: m.RdpViewerPage })),
    ),
    show: lazy(() =>
      import('@/features/direct-viewer/direct-viewer-page').then((m) => ({
        default: m.directViewerPage(
          lazy(() =>
            import('@/features/viewers/vnc-console').then((v) => ({ default: v.VncConsole })),
          ),
        ),
      })),
    ),
  },
};

/**
 * The operations a bespoke screen reads, where they are not its route kind's (the item calendar
 * has no `show` operation): the route shows not found while one of them is planned.
 */
export const bespokeOperations: Readonly<
  Record<string, Readonly<Record<string, readonly string[]>>>
> = {
  bookings: {
    list: ['bookings.list'],
    show: ['bookings.listItem', 'bookings.priority'],
  },
  planning: {
    list: ['planning.list', 'reservables.types', 'reservables.items', 'reservables.enabled'],
  },
};

/** Whether a bespoke screen's own operations are built; null when it declares none. */
export function bespokeBuilt(resource: string, kind: string): boolean | null {
  const needs = bespokeOperations[resource]?.[kind];
  if (!needs) return null;
  return needs.every(
    (key) => (operations as Readonly<Record<string, Operation>>)[key]?.planned === false,
  );
}
