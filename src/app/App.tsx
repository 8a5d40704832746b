import { Suspense, useCallback, useEffect, useRef, useState } from 'react';
// Direct module imports, not the barrels: a barrel would pull the lazy routes' screens into the
// initial chunk.
import { useBackgroundApprovalNotifications } from '../features/approvals/useApprovalNotifier.ts';
import { useInboxCount } from '../features/approvals/useInboxCount.ts';
import { useApprovalCountInTitle } from '../features/approvals/useCountInTitle.ts';
import { KillSwitch } from '../features/policy/KillSwitch.tsx';
import { ConnectionBadge } from '../features/connection/ConnectionBadge.tsx';
import { SessionsSidebar } from '../features/sessions/SessionsSidebar.tsx';
import type { ConnectionStore } from '../graphql/connectionStore.ts';
import { Link, navigate } from '../ui/router.tsx';
import { ThemeToggle } from '../ui/ThemeToggle.tsx';
import { useMediaQuery, WIDE_QUERY } from '../ui/useMediaQuery.ts';
import { checkpointsHref, sessionHref } from './paths.ts';
import {
  InboxScreen,
  NewSessionForm,
  RulesScreen,
  SessionScreen,
  SessionsOverview,
} from './lazyRoutes.tsx';
import { pathOf, useRoute, type Route } from './routes.ts';
import { AfterFirstContent, firstContentShown } from './firstContent.ts';

function BackgroundNotifications() {
  useBackgroundApprovalNotifications();
  return null;
}

function CountInTitle() {
  useApprovalCountInTitle();
  return null;
}

function InboxCount() {
  const count = useInboxCount();
  return count > 0 ? (
    <span className="ml-1 rounded-full bg-amber-500 px-1.5 text-xs font-semibold text-black">
      {count}
      <span className="sr-only"> waiting</span>
    </span>
  ) : null;
}

function InboxLink({ current }: { current: boolean }) {
  return (
    <Link
      to="/inbox"
      aria-current={current ? 'page' : undefined}
      className="rounded px-2 py-1 text-sm font-medium text-slate-800 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-blue-600 aria-[current=page]:underline dark:text-slate-100 dark:hover:bg-slate-800"
    >
      <span className="max-sm:hidden">Approval inbox</span>
      <span className="sm:hidden">Inbox</span>
      <AfterFirstContent>
        <InboxCount />
      </AfterFirstContent>
    </Link>
  );
}

function Home() {
  useEffect(() => {
    document.title = 'Agent Studio';
  }, []);
  return (
    // Focusable so a keyboard can scroll it even when nothing in it is a link (at 400 % zoom).
    <div
      role="region"
      aria-label="What waits"
      tabIndex={0}
      className="relative min-h-0 flex-1 overflow-y-auto focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-blue-600"
    >
      <div className="mx-auto max-w-4xl space-y-4 p-4 text-slate-800 roomy:p-8 dark:text-slate-200">
        <h1 className="text-2xl font-semibold text-slate-900 dark:text-slate-50">Agent Studio</h1>
        <Suspense fallback={null}>
          <SessionsOverview
            sessionHref={sessionHref}
            inboxHref="/inbox"
            checkpointsHref={checkpointsHref}
          />
        </Suspense>
        <p className="text-sm text-slate-600 dark:text-slate-300">
          Keyboard: Tab moves between controls, <kbd>j</kbd> and <kbd>k</kbd> move between events in
          a timeline, and every event has a link you can copy or open in a new tab.
        </p>
      </div>
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
    case 'checkpointRestore':
      return (
        <SessionScreen
          sessionId={route.sessionId}
          view="checkpoints"
          restoreCheckpointId={route.checkpointId}
        />
      );
    case 'inbox':
      return <InboxScreen />;
    case 'rules':
      return <RulesScreen />;
    case 'notFound':
      return <NotFound path={route.path} />;
  }
}

/**
 * The shell: a one-line header, the live sessions sidebar and the routed page, exactly one
 * screen tall at every size (the document never scrolls; each region scrolls itself). From
 * 900 px wide the sidebar stays beside the page; below it is a drawer the header's "Sessions"
 * button opens (Escape, the backdrop or picking a session closes it and focus goes back).
 */
export function App({ connection }: { connection: ConnectionStore }) {
  const route = useRoute();
  const activeSessionId = 'sessionId' in route ? route.sessionId : null;
  const wide = useMediaQuery(WIDE_QUERY);
  const [drawerOpen, setDrawerOpen] = useState(false);
  const drawer = drawerOpen && !wide;
  const menuButton = useRef<HTMLButtonElement>(null);
  const sidebar = useRef<HTMLElement>(null);
  const path = pathOf(route);
  // Leaving the first address shows the whole shell (firstContent.ts).
  const firstPath = useRef(path);
  useEffect(() => {
    if (path !== firstPath.current) firstContentShown();
  }, [path]);

  // Closing by Escape, the backdrop or Close gives the focus back to the button (once the
  // header is no longer inert); picking a session leaves it on the page.
  const returnFocus = useRef(false);
  const closeDrawer = useCallback(() => {
    returnFocus.current = true;
    setDrawerOpen(false);
  }, []);
  useEffect(() => {
    if (drawer || !returnFocus.current) return;
    returnFocus.current = false;
    menuButton.current?.focus();
  }, [drawer]);
  // Picking a session (any navigation) closes the drawer.
  useEffect(() => setDrawerOpen(false), [path]);
  useEffect(() => {
    if (!drawer) return;
    sidebar.current?.querySelector<HTMLElement>('a[aria-current="page"], a')?.focus();
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') closeDrawer();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [drawer, closeDrawer]);

  return (
    <div className="relative flex h-dvh flex-col overflow-hidden bg-white text-slate-900 dark:bg-slate-950 dark:text-slate-100">
      <a
        href="#main"
        className="sr-only focus:not-sr-only focus:absolute focus:top-2 focus:left-2 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2 focus:text-sm dark:focus:bg-slate-900"
      >
        Skip to content
      </a>
      <header
        inert={drawer}
        className="flex min-w-0 items-center gap-x-2 border-b border-slate-200 px-3 py-1.5 dark:border-slate-700"
      >
        <button
          ref={menuButton}
          type="button"
          aria-expanded={drawer}
          aria-controls="sessions-drawer"
          onClick={() => setDrawerOpen(true)}
          className="shrink-0 rounded border border-slate-300 px-2 py-1 text-sm font-medium text-slate-800 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-blue-600 wide:hidden dark:border-slate-600 dark:text-slate-100 dark:hover:bg-slate-800"
        >
          <span aria-hidden="true">☰</span>
          <span className="max-sm:sr-only"> Sessions</span>
        </button>
        <Link
          to="/"
          className="shrink-0 text-base font-semibold whitespace-nowrap text-slate-900 focus-visible:outline-2 focus-visible:outline-blue-600 dark:text-slate-50"
        >
          {/* A phone's one-line header keeps the name for screen readers and shows a mark. */}
          <span aria-hidden="true" className="sm:hidden">
            ⌂
          </span>
          <span className="max-sm:sr-only">
            <span className="max-md:hidden">Agent </span>Studio
          </span>
        </Link>
        <nav aria-label="Main" className="flex shrink-0 items-center gap-1">
          <InboxLink current={route.name === 'inbox'} />
          <Link
            to="/rules"
            aria-current={route.name === 'rules' ? 'page' : undefined}
            className="rounded px-2 py-1 text-sm font-medium text-slate-800 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-blue-600 aria-[current=page]:underline dark:text-slate-100 dark:hover:bg-slate-800"
          >
            Rules
          </Link>
        </nav>
        <div className="ml-auto flex min-w-0 items-center gap-2">
          <AfterFirstContent>
            <KillSwitch />
          </AfterFirstContent>
          <ConnectionBadge store={connection} />
          <ThemeToggle />
        </div>
      </header>
      <AfterFirstContent>
        {route.name === 'inbox' ? null : <BackgroundNotifications />}
        <CountInTitle />
      </AfterFirstContent>
      <div className="relative flex min-h-0 flex-1">
        {drawer ? (
          <button
            type="button"
            tabIndex={-1}
            aria-label="Close the sessions list"
            onClick={closeDrawer}
            className="fixed inset-0 z-30 bg-slate-900/40"
          />
        ) : null}
        <aside
          ref={sidebar}
          id="sessions-drawer"
          aria-label="Sessions"
          className={`flex shrink-0 flex-col border-r border-slate-200 bg-white dark:border-slate-700 dark:bg-slate-950 ${
            wide
              ? 'w-72'
              : `fixed inset-y-0 left-0 z-40 w-80 max-w-[85vw] shadow-xl ${drawer ? '' : 'invisible'}`
          }`}
        >
          {wide ? null : (
            <div className="flex justify-end px-2 pt-2">
              <button
                type="button"
                onClick={closeDrawer}
                className="rounded border border-slate-300 px-2 py-1 text-xs text-slate-800 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-slate-600 dark:text-slate-100 dark:hover:bg-slate-800"
              >
                Close
              </button>
            </div>
          )}
          <AfterFirstContent>
            <Suspense fallback={null}>
              <NewSessionForm onCreated={(sessionId) => navigate(sessionHref(sessionId))} />
            </Suspense>
            <SessionsSidebar activeSessionId={activeSessionId} sessionHref={sessionHref} />
          </AfterFirstContent>
        </aside>
        <main
          id="main"
          tabIndex={-1}
          inert={drawer}
          className="relative flex min-h-0 min-w-0 flex-1 flex-col focus:outline-none"
        >
          <Suspense fallback={<RouteLoading />}>
            <RouteView route={route} />
          </Suspense>
        </main>
      </div>
    </div>
  );
}
