/**
 * The event bus: repositories write the database, then publish here; the bus turns the internal
 * event name (desktops.updated) into its wire name (desktop_update) from src/generated/events.ts
 * and emits the plain-object payload (carrying its per-object version) to the owner's room.
 * With several nodes a socket.io PostgreSQL adapter fans the emits out; nothing changes here.
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../lib/plugin.ts';
import { stripFields } from '../http/access.ts';
import { events, wireByName, type EventPayloads } from '../../../../src/generated/events.ts';
import { roles as allRoles } from '../../../../src/generated/roles.ts';
import type { Role } from '../../../../src/generated/types.ts';

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
/** Every socket is in the room of its session's role: events can leave out fields a role may not see. */
export const roleRoom = (role: string) => `role:${role}`;

const plugin: FastifyPluginAsync = async (app) => {
  const listeners: ((event: ResourceEvent) => void)[] = [];
  app.decorate('events', {
    subscribe(listener) {
      listeners.push(listener);
    },
    publish(event) {
      const wire = wireByName[event.name];
      const def = events[wire] as { room: string; resource?: string };
      // The typed emit needs the wire name and payload paired; the union above guarantees it.
      type Emit = (ev: string, payload: unknown) => boolean;
      if (def.room === 'broadcast') {
        (app.io.emit as Emit)(wire, event.payload);
      } else {
        const rooms = [
          def.room === 'user' ? userRoom(event.ownerId) : `${def.room}:${event.ownerId}`,
        ];
        if (event.alsoAdmins) rooms.push(ADMINS_ROOM);
        // Roles that may not see some fields of the event's resource get a copy without them.
        const resource = def.resource ?? event.name.split('.')[0] ?? '';
        const hiding = allRoles.flatMap((role: Role) => {
          const hidden = app.access.hiddenFields(resource, role);
          return hidden.length > 0 ? [{ role, hidden }] : [];
        });
        const hidingRooms = hiding.map(({ role }) => roleRoom(role));
        (app.io.to(rooms).except(hidingRooms).emit as Emit)(wire, event.payload);
        for (const { role, hidden } of hiding) {
          const copy: unknown = structuredClone(event.payload);
          stripFields(copy, hidden);
          const others = allRoles.filter((r) => r !== role).map(roleRoom);
          (app.io.to(rooms).except(others).emit as Emit)(wire, copy);
        }
      }
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
