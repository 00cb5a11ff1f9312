import type { ReactNode } from 'react';
import { Navigate } from 'react-router';
import type { Role } from '@/generated/types';
import { useSessionRole } from '@/lib/session-state';
import { usePageTitle } from '@/hooks/use-page-title';
import { decideRole } from './guard-decision';

export interface RoleGateProps {
  /** Roles the route allows (the resource's `meta.roles`); null = every role. */
  roles: readonly Role[] | null;
  /** Translated route title for the document title. */
  title: string;
  children: ReactNode;
}

/** Point 6 of the guard: a role outside the route's roles goes to /desktops. */
export function RoleGate({ roles, title, children }: RoleGateProps) {
  const role = useSessionRole();
  usePageTitle(title);
  const redirect = decideRole(role, roles);
  if (redirect) return <Navigate to={redirect} replace />;
  return <>{children}</>;
}
