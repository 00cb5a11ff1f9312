/**
 * Bespoke pages by resource and action. Routes come from `src/generated/resources.ts`; a route
 * without an entry here renders the placeholder page titled from the resource.
 */
import { lazy, type ComponentType, type LazyExoticComponent } from 'react';

/** list/create/edit/show or an extra route kind (`x-resource.extraRoutes`). */
type PageAction = string;

export const pages: Partial<
  Record<string, Partial<Record<PageAction, LazyExoticComponent<ComponentType>>>>
> = {
  desktops: {
    list: lazy(() =>
      import('@/features/desktops/desktops-page').then((m) => ({ default: m.DesktopsPage })),
    ),
    create: lazy(() =>
      import('@/features/desktop-form/new-desktop-page').then((m) => ({
        default: m.NewDesktopPage,
      })),
    ),
    edit: lazy(() =>
      import('@/features/desktop-form/edit-desktop-page').then((m) => ({
        default: m.EditDesktopPage,
      })),
    ),
    viewer: lazy(() =>
      import('@/features/viewers/vnc-viewer-page').then((m) => ({ default: m.VncViewerPage })),
    ),
  },
};
