/**
 * A lazily loaded component that renders at once when its module is already there. `React.lazy`
 * suspends on its first render even when its chunk arrived long before (it asks for the module
 * only then), and React holds back the content replacing a shown fallback for up to 300 ms: the
 * first screen after the login, whose chunks were fetched while the user typed, waited for that.
 * `preload()` starts the load; an element mounted after it ended renders the component directly.
 */
import { lazy, useState, type ComponentType, type ReactElement } from 'react';

export interface PreloadableComponent<P extends object> {
  (props: P): ReactElement;
  /** Loads the module (once); resolves when an element would render without suspending. */
  preload: () => Promise<void>;
}

export function preloadableLazy<P extends object>(
  load: () => Promise<ComponentType<P>>,
): PreloadableComponent<P> {
  let loaded: ComponentType<P> | null = null;
  let loading: Promise<ComponentType<P>> | null = null;
  const start = (): Promise<ComponentType<P>> =>
    (loading ??= load().then(
      (component) => (loaded = component),
      (error: unknown) => {
        // A failed chunk (a deploy, the network) is asked for again by the next render.
        loading = null;
        throw error;
      },
    ));
  const Lazy = lazy(() => start().then((component) => ({ default: component })));
  function Preloadable(props: P): ReactElement {
    // Chosen once per mounted element: switching from the lazy to the loaded component would
    // mount the screen a second time.
    const [Component] = useState<ComponentType<P>>(() => loaded ?? (Lazy as ComponentType<P>));
    return <Component {...props} />;
  }
  Preloadable.preload = () => start().then(() => undefined);
  return Preloadable;
}
