/**
 * What the parts of the booking service share: the app, the serialiser that queues the changes of
 * one profile in this process, and the call that asks the scheduler to look again.
 */
import type { FastifyInstance } from 'fastify';
import type { Serialiser } from './booking-store.ts';

export interface BookingDeps {
  app: FastifyInstance;
  serialised: Serialiser;
  /** asks the scheduler to look again (a booking begins or ends at another time now) */
  changed(): void;
}
