import { useState } from 'react';

/**
 * True from the first render `value` is true on, whatever it becomes after. A form shows its
 * skeleton until its reference data has loaded once; a later reload of that data must not swap
 * the form back to the skeleton, which would unmount it and drop what the user has typed.
 */
export function useStaysTrue(value: boolean): boolean {
  const [seen, setSeen] = useState(value);
  if (value && !seen) setSeen(true);
  return seen || value;
}
