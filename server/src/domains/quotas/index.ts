/** The quotas domain's only door: what other domains and the app composition use. */
export {
  checkDeploymentQuota,
  checkTargetDesktopLimits,
  deploymentUsage,
} from './deployment-quotas.ts';
export { checkMediaCreate, GIB, mediaBytesLeft } from './media-quotas.ts';
export {
  appliedQuota,
  assertHardwareWithin,
  checkDesktopCreate,
  checkDesktopStart,
  checkTemplateCreate,
  hardwareLimits,
  lockQuotaScopes,
  lockQuotaScopesOf,
  RUNNING_STATES,
  templatesUsedBy,
  usedBy,
} from './quotas.ts';
export type { QuotaSubject } from './quotas.ts';
