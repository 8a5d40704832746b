import { lazy } from 'react';

/**
 * Route screens loaded on demand (issue 13): the first paint needs only the shell, so the
 * timeline, the checkpoint browser and the inbox arrive in their own chunks when a route wants
 * them. Each is a thin `lazy()` over the module that composes the screen.
 */
const loadSessionScreen = () => import('./SessionScreen.tsx');

export const SessionScreen = lazy(() =>
  loadSessionScreen().then((m) => ({ default: m.SessionScreen })),
);

/**
 * Starts fetching the screen the address names while the app boots (token check, config), so
 * opening a session's link does not wait for boot before asking for the timeline's chunk.
 */
export function preloadScreenFor(pathname: string): void {
  if (pathname.startsWith('/sessions/')) void loadSessionScreen().catch(() => undefined);
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
