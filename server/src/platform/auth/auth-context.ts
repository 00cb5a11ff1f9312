/**
 * Who is calling: the identity an authenticated request carries. Declared here, below the plugins,
 * so lib code (ownership predicates) can take a caller without importing the auth plugin; the auth
 * plugin extends it with the session row it was read from.
 */
import type { Role } from '../../../../src/generated/types.ts';

/** The part of the caller that ownership and sharing rules look at. */
export interface Caller {
  userId: string;
  role: Role;
  categoryId: string;
}

/** The caller's identity as read from the session row at authentication, plus the bearer token. */
export interface AuthIdentity extends Caller {
  sessionId: string;
  groupId: string;
  name: string;
  provider: string;
  token: string;
}
