/**
 * Bespoke pages by resource and action. Routes come from `src/generated/resources.ts`; a route
 * without an entry here renders the placeholder page titled from the resource.
 */
import { lazy, type ComponentType, type LazyExoticComponent } from 'react';

type PageAction = 'list' | 'create' | 'edit' | 'show';

export const pages: Partial<Record<string, Partial<Record<PageAction, LazyExoticComponent<ComponentType>>>>> = {
  desktops: {
    list: lazy(() => import('@/features/desktops/desktops-page').then((m) => ({ default: m.DesktopsPage }))),
  },
};
