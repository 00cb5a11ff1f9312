/**
 * A target's custom domain: it may not be the bastion domain or the portal's host, nor another
 * target's (409 `bastion_domain_already_exists`), and its CNAME record must name
 * `<target id>.<bastion domain>` (428 `bastion_domain_not_found` without a record,
 * `bastion_domain_error` when the lookup fails, `bastion_domain_mismatch` when it names another).
 */
import { promises as dns } from 'node:dns';
import { ApiError } from '../../platform/http/api-error.ts';

/** The CNAME targets of a name (node's resolver; tests put a stub in its place). */
export type CnameResolver = (domain: string) => Promise<string[]>;

export const systemCnameResolver: CnameResolver = (domain) => dns.resolveCname(domain);

const NO_RECORD = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN']);

/** A domain as stored: lower case, without a trailing dot, null when blank. */
export function normalizeDomain(domain: string | null | undefined): string | null {
  const value = domain?.trim().toLowerCase().replace(/\.$/, '');
  return value ? value : null;
}

export function assertDomainFree(
  domain: string,
  reserved: readonly (string | null)[],
  usedByOther: boolean,
): void {
  if (usedByOther || reserved.some((r) => r && r.toLowerCase() === domain))
    throw new ApiError('conflict', 'That domain is already used', 'bastion_domain_already_exists');
}

export async function assertCnameFor(
  resolve: CnameResolver,
  domain: string,
  expected: string | null,
): Promise<void> {
  let names: string[];
  try {
    names = await resolve(domain);
  } catch (err) {
    const code = (err as { code?: string }).code ?? '';
    if (NO_RECORD.has(code))
      throw new ApiError(
        'precondition_required',
        `No CNAME record for ${domain}`,
        'bastion_domain_not_found',
      );
    throw new ApiError(
      'precondition_required',
      `The CNAME of ${domain} can not be read`,
      'bastion_domain_error',
    );
  }
  if (!expected)
    throw new ApiError('precondition_required', 'No bastion domain is set', 'bastion_domain_error');
  if (!names.some((name) => normalizeDomain(name) === expected))
    throw new ApiError(
      'precondition_required',
      `The CNAME of ${domain} must name ${expected}`,
      'bastion_domain_mismatch',
      { expected },
    );
}
