/**
 * The event bus: repositories write the database, then publish here; the bus turns the internal
 * event name (desktops.updated) into its wire name (desktop_update) from src/generated/events.ts
 * and emits the plain-object payload (carrying its per-object version) to the owner's room.
 * With several nodes a socket.io PostgreSQL adapter fans the emits out; nothing changes here.
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../../lib/plugin.ts';
import { events, wireByName, type EventPayloads } from '../../../../src/generated/events.ts';

export type ResourceEvent = {
  [N in keyof EventPayloads]: {
    name: N;
    payload: EventPayloads[N];
    ownerId: string;
    alsoAdmins?: boolean;
  };
}[keyof EventPayloads];

export interface EventBus {
  publish(event: ResourceEvent): void;
  /**
   * Listeners called synchronously with every event published on this node, after its emit (the
   * console proxies re-check their connections when a desktop changes). A throwing listener is
   * logged and does not stop the others.
   */
  subscribe(listener: (event: ResourceEvent) => void): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    events: EventBus;
  }
}

export const userRoom = (userId: string) => `user:${userId}`;
export const ADMINS_ROOM = 'admins';

const plugin: FastifyPluginAsync = async (app) => {
  const listeners: ((event: ResourceEvent) => void)[] = [];
  app.decorate('events', {
    subscribe(listener) {
      listeners.push(listener);
    },
    publish(event) {
      const wire = wireByName[event.name];
      const def = events[wire];
      const rooms = [
        def.room === 'user' ? userRoom(event.ownerId) : `${def.room}:${event.ownerId}`,
      ];
      if (event.alsoAdmins) rooms.push(ADMINS_ROOM);
      // The typed emit needs the wire name and payload paired; the union above guarantees it.
      (app.io.to(rooms).emit as (ev: string, payload: unknown) => boolean)(wire, event.payload);
      for (const listener of listeners) {
        try {
          listener(event);
        } catch (err) {
          app.log.warn({ err, event: event.name }, 'event listener failed');
        }
      }
    },
  } satisfies EventBus);
};

export default globalPlugin(plugin, 'event-bus');
