import { Suspense } from 'react';
import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { preloadableLazy } from './preloadable-lazy';

afterEach(cleanup);

function Screen({ name }: { name: string }) {
  return <p>screen {name}</p>;
}

/** A component module whose load the test ends when it wants; counts the loads. */
function deferredModule() {
  let finish: () => void = () => undefined;
  let loads = 0;
  const load = () => {
    loads++;
    return new Promise<typeof Screen>((resolve) => {
      finish = () => resolve(Screen);
    });
  };
  return { load, finish: () => finish(), loads: () => loads };
}

describe('preloadableLazy', () => {
  it('renders at once, without its fallback, once preloaded', async () => {
    const module = deferredModule();
    const Page = preloadableLazy(module.load);
    const ready = Page.preload();
    module.finish();
    await ready;
    render(
      <Suspense fallback={<p>loading</p>}>
        <Page name="a" />
      </Suspense>,
    );
    // Synchronously there: nothing suspended, so React had nothing to hold back.
    expect(screen.getByText('screen a')).toBeTruthy();
    expect(screen.queryByText('loading')).toBeNull();
    expect(module.loads()).toBe(1);
  });

  it('suspends like React.lazy when it was not preloaded, and loads once', async () => {
    const module = deferredModule();
    const Page = preloadableLazy(module.load);
    render(
      <Suspense fallback={<p>loading</p>}>
        <Page name="b" />
      </Suspense>,
    );
    expect(screen.getByText('loading')).toBeTruthy();
    void Page.preload();
    await act(async () => module.finish());
    expect(await screen.findByText('screen b')).toBeTruthy();
    expect(module.loads()).toBe(1);
  });

  it('loads again after a failed load', async () => {
    let attempts = 0;
    const Page = preloadableLazy(() =>
      ++attempts === 1 ? Promise.reject(new Error('chunk')) : Promise.resolve(Screen),
    );
    await expect(Page.preload()).rejects.toThrow('chunk');
    await Page.preload();
    render(<Page name="c" />);
    expect(screen.getByText('screen c')).toBeTruthy();
    expect(attempts).toBe(2);
  });
});
