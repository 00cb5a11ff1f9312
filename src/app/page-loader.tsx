import { Center, Loader } from '@mantine/core';

/** Suspense fallback while a lazy chunk loads. */
export function PageLoader() {
  return (
    <Center mih="50vh">
      <Loader />
    </Center>
  );
}
