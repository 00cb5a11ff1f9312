/**
 * Wires bookings into the app: the booking service (bookings, start-now, the desktops' booking
 * fields), the planning service (items, profiles and plans), the scheduler that makes bookings
 * begin and end, and the engine's start gate. Bookings of a desktop or deployment that is deleted
 * go with it. Decorates `app.bookingService`, `app.planningService` and `app.bookingScheduler`.
 *
 * Registered after the engine plugin (the gate goes on its engine).
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../../platform/lib/plugin.ts';
import { createBookingService, type BookingService } from './booking-service.ts';
import type { ItemType } from './booking-items.ts';
import { createPlanningService, type PlanningService } from './booking-plans.ts';
import { createBookingScheduler, type BookingScheduler } from './booking-scheduler.ts';

declare module 'fastify' {
  interface FastifyInstance {
    bookingService: BookingService;
    planningService: PlanningService;
    bookingScheduler: BookingScheduler;
  }
}

const plugin: FastifyPluginAsync = async (app) => {
  const scheduler = createBookingScheduler(app, () => service);
  const service = createBookingService(app, { onChange: () => scheduler.poke() });
  const planning = createPlanningService(app, () => service);
  app.decorate('bookingService', service);
  app.decorate('planningService', planning);
  app.decorate('bookingScheduler', scheduler);
  app.engine.setStartGate((desktop) => service.gate(desktop));

  const inflight = new Set<Promise<void>>();
  const gone = (type: ItemType, id: string) => {
    const work = service
      .itemGone(type, id)
      .catch((err: unknown) =>
        app.log.warn({ err, type, id }, 'removing the bookings of an item failed'),
      )
      .finally(() => inflight.delete(work));
    inflight.add(work);
  };
  app.events.subscribe((event) => {
    if (event.name === 'desktops.deleted') gone('desktop', event.payload.id);
    else if (event.name === 'deployments.deleted') gone('deployment', event.payload.id);
  });

  app.addHook('onReady', async () => {
    scheduler.start();
  });
  app.addHook('onClose', async () => {
    await scheduler.stop();
    await Promise.allSettled([...inflight]);
  });
};

export default globalPlugin(plugin, 'bookings');
