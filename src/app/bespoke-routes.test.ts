/**
 * Bespoke screens that name their own operations (the booking calendars, the planning screen)
 * are built when those are, and show not found while one is planned.
 */
import { describe, expect, it } from 'vitest';
import { bespokeBuilt } from './pages';
import { deriveRoutes } from './routes';

const route = (resource: string, kind: string) =>
  deriveRoutes().find((item) => item.resource === resource && item.kind === kind);

describe('bespoke routes', () => {
  it('builds the item calendar and the summary once their reads are built', () => {
    expect(bespokeBuilt('bookings', 'show')).toBe(true);
    expect(route('bookings', 'show')).toMatchObject({ path: '/booking/:type/:id', built: true });
    expect(route('bookings', 'list')).toMatchObject({ path: '/booking/summary', built: true });
  });

  it('builds planning once its operations are built', () => {
    expect(bespokeBuilt('planning', 'list')).toBe(true);
    expect(route('planning', 'list')).toMatchObject({ path: '/planning', built: true });
  });

  it('leaves screens without their own list to the route kind', () => {
    expect(bespokeBuilt('desktops', 'list')).toBeNull();
  });
});
