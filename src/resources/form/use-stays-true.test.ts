import { renderHook } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { useStaysTrue } from './use-stays-true';

describe('useStaysTrue', () => {
  it('is false until the value is true, then stays true when the value falls back', () => {
    const { result, rerender } = renderHook(({ value }) => useStaysTrue(value), {
      initialProps: { value: false },
    });
    expect(result.current).toBe(false);
    rerender({ value: true });
    expect(result.current).toBe(true);
    rerender({ value: false });
    expect(result.current).toBe(true);
  });
});
