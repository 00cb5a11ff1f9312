/**
 * The event bus: repositories write the database, then publish here; the bus turns the internal
 * event name (desktops.updated) into its wire name (desktop_update) from src/generated/events.ts
 * and emits the plain-object payload (carrying its per-object version) to the owner's room (the
 * admins' room for an event declared there: the owner is not read).
 * With several nodes (PostgreSQL) the socket.io PostgreSQL adapter fans the emits out to the
 * sockets of every node (platform/http/socket-io.ts); nothing changes here. Listeners run only on
 * the node that published: what every node must apply travels on the cluster bus (cluster-bus.ts).
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
   * Emits the event to the sockets of this node only, without listeners: for what every node
   * emits itself once it applied a cluster-wide change (the role-visibility config).
   */
  publishLocal(event: ResourceEvent): void;
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
  const emit = (event: ResourceEvent, local: boolean) => {
    const io = local ? app.io.local : app.io;
    const wire = wireByName[event.name];
    const def = events[wire] as { room: string; resource?: string };
    // The typed emit needs the wire name and payload paired; the union above guarantees it.
    type Emit = (ev: string, payload: unknown) => boolean;
    if (def.room === 'broadcast') {
      (io.emit as Emit)(wire, event.payload);
      return;
    }
    const rooms =
      def.room === 'admins'
        ? [ADMINS_ROOM]
        : [def.room === 'user' ? userRoom(event.ownerId) : `${def.room}:${event.ownerId}`];
    if (event.alsoAdmins && def.room !== 'admins') rooms.push(ADMINS_ROOM);
    // Roles that may not see some fields of the event's resource get a copy without them.
    const resource = def.resource ?? event.name.split('.')[0] ?? '';
    const hiding = allRoles.flatMap((role: Role) => {
      const hidden = app.access.hiddenFields(resource, role);
      return hidden.length > 0 ? [{ role, hidden }] : [];
    });
    const hidingRooms = hiding.map(({ role }) => roleRoom(role));
    (io.to(rooms).except(hidingRooms).emit as Emit)(wire, event.payload);
    for (const { role, hidden } of hiding) {
      const copy: unknown = structuredClone(event.payload);
      stripFields(copy, hidden);
      const others = allRoles.filter((r) => r !== role).map(roleRoom);
      (io.to(rooms).except(others).emit as Emit)(wire, copy);
    }
  };
  app.decorate('events', {
    subscribe(listener) {
      listeners.push(listener);
    },
    publishLocal(event) {
      emit(event, true);
    },
    publish(event) {
      emit(event, false);
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
