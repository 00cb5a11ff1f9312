import { lazy } from 'react';

// The form engine loads with the first action form opened, not with every list.
export const ActionFormDialog = lazy(() =>
  import('./action-form-dialog').then((m) => ({ default: m.ActionFormDialog })),
);
