/**
 * Role visibility types: which roles may use which operation. Declared here, below the plugins, so
 * lib code (OpenAPI, routes) can read them without importing the access plugin that implements them.
 */
import type { Operation } from '../../../src/generated/api.ts';
import type { Role } from '../../../src/generated/types.ts';

/** roleSets[resource][setName] = roles allowed. */
export type RoleSets = Record<string, Record<string, readonly Role[]>>;

export interface Access {
  roleSets: RoleSets;
  /** Roles allowed on an operation; null = public. */
  rolesFor(op: Pick<Operation, 'resource' | 'access' | 'roles'>): readonly Role[] | null;
}
