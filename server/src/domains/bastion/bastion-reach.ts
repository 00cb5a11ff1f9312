/**
 * Whether the SSH or HTTP bastion may reach a target's guest now: the target exists, that access
 * is enabled, its desktop is started and has an address. Answers the guest's address and the
 * desktop's guest account (its guest credentials, empty when unset), or why not.
 */
import type { FastifyInstance } from 'fastify';
import { desktopState } from '../../../../src/generated/policy.ts';
import type { Bastion } from '../../../../src/generated/types.ts';

export type Reach =
  | { ok: true; target: Bastion; ip: string; guest: { username: string; password: string } }
  | { ok: false; reason: 'no_target' | 'disabled' | 'not_running' | 'no_address' };

export async function reachGuest(
  app: FastifyInstance,
  target: Bastion | undefined,
  access: 'ssh' | 'http',
): Promise<Reach> {
  if (!target) return { ok: false, reason: 'no_target' };
  if (!target[access].enabled) return { ok: false, reason: 'disabled' };
  if (!(await app.settings.all()).bastion.enabled) return { ok: false, reason: 'disabled' };
  const desktop = await app.desktops.byId(target.desktop_id);
  if (desktop?.state !== desktopState.started) return { ok: false, reason: 'not_running' };
  const ip = (desktop.runtime as { ip?: unknown }).ip;
  if (typeof ip !== 'string' || !ip) return { ok: false, reason: 'no_address' };
  const credentials = desktop.guestProperties.credentials;
  return {
    ok: true,
    target,
    ip,
    guest: { username: credentials?.username ?? '', password: credentials?.password ?? '' },
  };
}
