/** Where the portal's own links lead, from the generated resources (no route literals elsewhere). */
import { resourceOf } from '@/generated/resources';
import { operations } from '@/generated/api';

/** Home: the desktops list. */
export const HOME_PATH = resourceOf('desktops')?.list ?? '/';

/** The profile screen (quotas included), once its show operation is built; null before. */
export const PROFILE_PATH = operations['profile.show'].planned
  ? null
  : (resourceOf('profile')?.show ?? null);
