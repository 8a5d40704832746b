import { Suspense, useEffect } from 'react';
// Direct module imports, not the barrels: a barrel would pull the lazy routes' screens into the
// initial chunk.
import { useBackgroundApprovalNotifications } from '../features/approvals/useApprovalNotifier.ts';
import { useInboxCount } from '../features/approvals/useInboxCount.ts';
import { ConnectionBadge } from '../features/connection/ConnectionBadge.tsx';
import { SessionsSidebar } from '../features/sessions/SessionsSidebar.tsx';
import type { ConnectionStore } from '../graphql/connectionStore.ts';
import { Link } from '../ui/router.tsx';
import { ThemeToggle } from '../ui/ThemeToggle.tsx';
import { sessionHref } from './paths.ts';
import { InboxScreen, SessionScreen } from './lazyRoutes.tsx';
import { useRoute, type Route } from './routes.ts';

function BackgroundNotifications() {
  useBackgroundApprovalNotifications();
  return null;
}

function InboxLink({ current }: { current: boolean }) {
  const count = useInboxCount();
  return (
    <Link
      to="/inbox"
      aria-current={current ? 'page' : undefined}
      className="rounded px-2 py-1 text-sm font-medium text-slate-800 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-blue-600 aria-[current=page]:underline dark:text-slate-100 dark:hover:bg-slate-800"
    >
      Approval inbox
      {count > 0 ? (
        <span className="ml-1 rounded-full bg-amber-500 px-1.5 text-xs font-semibold text-black">
          {count}
          <span className="sr-only"> waiting</span>
        </span>
      ) : null}
    </Link>
  );
}

function Home() {
  useEffect(() => {
    document.title = 'Agent Studio';
  }, []);
  return (
    <div className="mx-auto max-w-2xl space-y-3 p-8 text-slate-800 dark:text-slate-200">
      <h1 className="text-2xl font-semibold text-slate-900 dark:text-slate-50">Agent Studio</h1>
      <p>
        Pick a session on the left to watch it live. Tool calls that ask for permission show an
        approval prompt in the timeline and in the{' '}
        <Link to="/inbox" className="underline">
          approval inbox
        </Link>
        ; checkpoints can be compared and restored from a session&apos;s Checkpoints view.
      </p>
      <p className="text-sm text-slate-600 dark:text-slate-300">
        Keyboard: Tab moves between controls, <kbd>j</kbd> and <kbd>k</kbd> move between events in a
        timeline, and every event has a link you can copy.
      </p>
    </div>
  );
}

function NotFound({ path }: { path: string }) {
  return (
    <div className="p-8 text-slate-800 dark:text-slate-200">
      <h1 className="text-xl font-semibold">Nothing here</h1>
      <p className="mt-2">
        No page at <code className="font-mono">{path}</code>.{' '}
        <Link to="/" className="underline">
          Go to the start page
        </Link>
        .
      </p>
    </div>
  );
}

function RouteLoading() {
  return (
    <p role="status" className="p-6 text-sm text-slate-700 dark:text-slate-200">
      Loading…
    </p>
  );
}

function RouteView({ route }: { route: Route }) {
  switch (route.name) {
    case 'home':
      return <Home />;
    case 'session':
      return <SessionScreen sessionId={route.sessionId} view="timeline" />;
    case 'event':
      return <SessionScreen sessionId={route.sessionId} view="timeline" focusSeq={route.seq} />;
    case 'checkpoints':
      return <SessionScreen sessionId={route.sessionId} view="checkpoints" />;
    case 'inbox':
      return <InboxScreen />;
    case 'notFound':
      return <NotFound path={route.path} />;
  }
}

/** The shell: header with the connection state, the live sessions sidebar, and the routed page. */
export function App({ connection }: { connection: ConnectionStore }) {
  const route = useRoute();
  const activeSessionId = 'sessionId' in route ? route.sessionId : null;
  return (
    <div className="flex h-screen flex-col bg-white text-slate-900 dark:bg-slate-950 dark:text-slate-100">
      <a
        href="#main"
        className="sr-only focus:not-sr-only focus:absolute focus:top-2 focus:left-2 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2 focus:text-sm dark:focus:bg-slate-900"
      >
        Skip to content
      </a>
      <header className="flex flex-wrap items-center gap-x-4 gap-y-2 border-b border-slate-200 px-4 py-2 dark:border-slate-700">
        <Link
          to="/"
          className="text-base font-semibold text-slate-900 focus-visible:outline-2 focus-visible:outline-blue-600 dark:text-slate-50"
        >
          Agent Studio
        </Link>
        <nav aria-label="Main">
          <InboxLink current={route.name === 'inbox'} />
        </nav>
        <div className="ml-auto flex min-w-0 items-center gap-3">
          <ConnectionBadge store={connection} />
          <ThemeToggle />
        </div>
      </header>
      {route.name === 'inbox' ? null : <BackgroundNotifications />}
      <div className="flex min-h-0 flex-1">
        <aside
          aria-label="Sessions"
          className="flex w-72 shrink-0 flex-col border-r border-slate-200 dark:border-slate-700"
        >
          <SessionsSidebar activeSessionId={activeSessionId} sessionHref={sessionHref} />
        </aside>
        <main
          id="main"
          tabIndex={-1}
          className="flex min-h-0 min-w-0 flex-1 flex-col focus:outline-none"
        >
          <Suspense fallback={<RouteLoading />}>
            <RouteView route={route} />
          </Suspense>
        </main>
      </div>
    </div>
  );
}
