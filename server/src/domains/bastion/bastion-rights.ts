/**
 * Who may use the bastion: the portal's bastion settings (enabled, the roles it is for) decide
 * `can_use_bastion`; custom domains also need `individual_domains`. The bastion domain is the
 * configured one. The same answer feeds /user/config and guards the bastion operations.
 */
import type { Settings } from '../../platform/repository/settings-repository.ts';
import type { Role } from '../../../../src/generated/types.ts';

export interface BastionRights {
  use: boolean;
  individualDomains: boolean;
  /** the domain targets' host names end with (`<target id>.<domain>`), null when none is set */
  domain: string | null;
}

export function bastionRights(settings: Settings, role: Role): BastionRights {
  const { bastion } = settings;
  const roles = bastion.roles ?? [];
  const use = bastion.enabled && (roles.length === 0 || roles.includes(role));
  return {
    use,
    individualDomains: use && bastion.individual_domains,
    domain: use ? (bastion.domain?.toLowerCase() ?? null) : null,
  };
}
