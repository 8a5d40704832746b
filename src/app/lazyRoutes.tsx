import { lazy, useState, type ComponentProps, type ComponentType, type JSX } from 'react';
import type { SessionScreen as SessionScreenType } from './SessionScreen.tsx';

/**
 * A screen loaded on demand that renders at once when its chunk is already in. `lazy()` alone
 * suspends on its first render even then, and React holds the content a Suspense boundary
 * reveals after showing its fallback until 300 ms after that fallback appeared (its throttle):
 * opening a session's address painted its newest rows about 200 ms late for nothing (issue 13).
 * Each mounted instance keeps the way it started (direct or lazy), so it never remounts.
 */
export function preloadable<P extends object>(
  load: () => Promise<ComponentType<P>>,
): ((props: P) => JSX.Element) & { preload(): Promise<ComponentType<P>> } {
  let loaded: ComponentType<P> | null = null;
  let pending: Promise<ComponentType<P>> | null = null;
  const preload = () =>
    (pending ??= load().then(
      (component) => (loaded = component),
      (error: unknown) => {
        // A chunk that failed to load is asked for again next time.
        pending = null;
        throw error;
      },
    ));
  const Lazy = lazy(() => preload().then((component) => ({ default: component })));
  function Screen(props: P) {
    const [Direct] = useState(() => loaded);
    return Direct ? <Direct {...props} /> : <Lazy {...props} />;
  }
  return Object.assign(Screen, { preload });
}

/**
 * Route screens loaded on demand (issue 13): the first paint needs only the shell, so the
 * timeline, the checkpoint browser and the inbox arrive in their own chunks when a route wants
 * them.
 */
export const SessionScreen = preloadable<ComponentProps<typeof SessionScreenType>>(() =>
  import('./SessionScreen.tsx').then((m) => m.SessionScreen),
);

/**
 * Starts loading the screen the address names while the app boots (token check, config), so
 * opening a session's link does not wait for boot before asking for the timeline's chunk (the
 * built index.html has asked for the chunk's files already: vite.config.ts).
 */
export function preloadScreenFor(pathname: string): void {
  if (pathname.startsWith('/sessions/')) void SessionScreen.preload().catch(() => undefined);
}

export const InboxScreen = lazy(() =>
  import('./InboxScreen.tsx').then((m) => ({ default: m.InboxScreen })),
);

export const RulesScreen = lazy(() =>
  import('./RulesScreen.tsx').then((m) => ({ default: m.RulesScreen })),
);

export const CheckpointBrowserPage = lazy(() =>
  import('../features/checkpoints/index.ts').then((m) => ({ default: m.CheckpointBrowserPage })),
);

/**
 * Parts of the shell that no first paint needs (issue 13, initial JS <= 120 KB gzip): the start
 * page's overview (a route of its own), the new-session form (it waits for `studioProjects`
 * anyway and shows nothing until a project can start a session) and the boot problem page (only
 * when boot fails). Each renders nothing until its chunk is in.
 */
export const SessionsOverview = lazy(() =>
  import('../features/sessions/SessionsOverview.tsx').then((m) => ({
    default: m.SessionsOverview,
  })),
);

export const NewSessionForm = lazy(() =>
  import('../features/new-session/index.ts').then((m) => ({ default: m.NewSessionForm })),
);

export const BootProblemPage = lazy(() =>
  import('./BootProblemPage.tsx').then((m) => ({ default: m.BootProblemPage })),
);

/** Loads every lazy screen's module now (tests render routes without waiting on a transform). */
export async function preloadRoutes(): Promise<void> {
  await Promise.all([
    import('./SessionScreen.tsx'),
    import('./InboxScreen.tsx'),
    import('./RulesScreen.tsx'),
    import('../features/checkpoints/index.ts'),
    import('../features/sessions/SessionsOverview.tsx'),
    import('../features/new-session/index.ts'),
    import('./BootProblemPage.tsx'),
  ]);
}
