/**
 * Who writes in the administration area, and what they may reach. Admins reach every category;
 * managers only their own, never an admin account, and they never give the admin role. The admin
 * command line acts as an admin named `cli`.
 */
import { ApiError } from '../http/api-error.ts';
import type { Role } from '../../../../src/generated/types.ts';
import { hasRoleAtLeast, role } from '../../../../src/generated/policy.ts';

export interface Actor {
  /** user id, or `cli` for the command line */
  id: string;
  name: string;
  role: Role;
  /** the actor's own category (empty for the command line) */
  categoryId: string;
}

/** The command line: an admin, so the audit log names it. */
export const CLI_ACTOR: Actor = { id: 'cli', name: 'cli', role: role.admin, categoryId: '' };

export const forbidden = (message: string, params: Record<string, unknown> | null = null) =>
  new ApiError('forbidden', message, 'forbidden', params);

export const notFound = (what: string, code = 'not_found', params: Record<string, unknown> = {}) =>
  new ApiError('not_found', `${what} not found`, code, params);

/** Only admins and managers administer anything. */
export function requireStaff(actor: Actor): void {
  if (!hasRoleAtLeast(actor.role, role.manager))
    throw forbidden('Only admins and managers administer users');
}

export function requireAdmin(actor: Actor): void {
  if (!hasRoleAtLeast(actor.role, role.admin)) throw forbidden('Only admins may do this');
}

/** Whether the actor reaches records of the category. */
export function reaches(actor: Actor, categoryId: string): boolean {
  return hasRoleAtLeast(actor.role, role.admin) || actor.categoryId === categoryId;
}

/** Writes outside the actor's category are refused. */
export function requireReach(actor: Actor, categoryId: string): void {
  if (!reaches(actor, categoryId)) throw forbidden('That record belongs to another category');
}

/** A manager never acts on an admin account nor gives the admin role. */
export function requireRoleReach(actor: Actor, ...roles: (Role | undefined)[]): void {
  if (!hasRoleAtLeast(actor.role, role.admin) && roles.includes(role.admin))
    throw forbidden('Only admins manage admin accounts', { role: role.admin });
}
