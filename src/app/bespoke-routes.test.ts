/**
 * Bespoke screens that name their own operations (the booking calendars, the planning screen)
 * are built when those are, and show not found while one is planned. Here the booking
 * operations are built and the planner's are still planned.
 */
import { describe, expect, it, vi } from 'vitest';
import { bespokeBuilt } from './pages';
import { deriveRoutes } from './routes';

vi.mock('@/generated/api', async (importOriginal) => {
  const original = await importOriginal<typeof import('@/generated/api')>();
  return {
    ...original,
    operations: Object.fromEntries(
      Object.entries(original.operations).map(([key, op]) => [
        key,
        key.startsWith('bookings.') ? { ...op, planned: false } : { ...op },
      ]),
    ),
  };
});

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
