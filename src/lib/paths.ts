/** Where the portal's own links lead, from the generated resources (no route literals elsewhere). */
import { resourceOf } from '@/generated/resources';
import { operations } from '@/generated/api';

/** Home: the desktops list. */
export const HOME_PATH = resourceOf('desktops')?.list ?? '/';

/** The profile (quotas) screen, while it is built; null otherwise. */
export const PROFILE_PATH = operations['profile.appliedQuota'].planned
  ? null
  : (resourceOf('profile')?.list ?? null);
