/**
 * The `expiryDate` widget loaded with the first form that asks it: the date picker (and its
 * styles) stays out of the application's first chunk.
 */
import { lazy, Suspense } from 'react';
import { Loader } from '@mantine/core';
import type { WidgetProps } from '@/resources/form/types';

const ExpiryDateWidget = lazy(() =>
  import('./expiry-date-widget').then((m) => ({ default: m.ExpiryDateWidget })),
);

export function LazyExpiryDateWidget(props: WidgetProps) {
  return (
    <Suspense fallback={<Loader size="xs" />}>
      <ExpiryDateWidget {...props} />
    </Suspense>
  );
}
