/**
 * Messages to a user: the `msg` socket event, sent to the user's room (every socket the user has
 * open), shown by the portal as a message dialog worded by `msg_code` with `params`.
 */
import type { FastifyInstance } from 'fastify';
import type { Message } from '../../../../src/generated/types.ts';

export function sendMessage(app: FastifyInstance, userId: string, message: Message): void {
  app.events.publish({ name: 'messages.received', payload: message, ownerId: userId });
}
