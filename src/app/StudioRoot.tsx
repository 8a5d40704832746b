import { Suspense, useCallback, useEffect, useState } from 'react';
import { App } from './App.tsx';
import {
  locationHasToken,
  rememberToken,
  takeTokenFromLocation,
  type BootProblem,
} from './bootstrap.ts';
import { BootProblemPage } from './lazyRoutes.tsx';
import { startStudio, takeEarlyStart, type StudioParts } from './startStudio.ts';
import { StudioProviders } from './StudioProviders.tsx';

type Phase =
  | { kind: 'booting' }
  | { kind: 'problem'; problem: BootProblem }
  | ({ kind: 'ready' } & StudioParts);

/**
 * Boots (token, config, token check; `startStudio`), then provides the one urql Client, the
 * QueryClient and the HTTP client for /healthz and /api/blobs (same endpoint origin, same
 * token) to the app. The first boot is the one main.tsx started before React rendered.
 */
export function StudioRoot() {
  const [phase, setPhase] = useState<Phase>({ kind: 'booting' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let cancelled = false;
    const start = (attempt === 0 ? takeEarlyStart() : null) ?? startStudio();
    start.onRejected(() => {
      if (!cancelled) setPhase({ kind: 'problem', problem: { kind: 'rejectedToken' } });
    });
    void start.outcome.then((result) => {
      if (cancelled) return;
      setPhase(
        result.ok
          ? { kind: 'ready', ...result.parts }
          : { kind: 'problem', problem: result.problem },
      );
    });
    return () => {
      cancelled = true;
      start.dispose();
    };
  }, [attempt]);

  const retry = useCallback(() => {
    setPhase({ kind: 'booting' });
    setAttempt((n) => n + 1);
  }, []);

  // `#token=` is taken whenever it appears (an edited or pasted address, not only at load):
  // out of the address bar at once, and the studio restarts with it if it is a new token.
  const currentToken = phase.kind === 'ready' ? phase.token : null;
  useEffect(() => {
    const onHashChange = () => {
      if (!locationHasToken()) return;
      const token = takeTokenFromLocation();
      if (token && token !== currentToken) retry();
    };
    window.addEventListener('hashchange', onHashChange);
    return () => window.removeEventListener('hashchange', onHashChange);
  }, [currentToken, retry]);

  const submitToken = useCallback(
    (token: string) => {
      rememberToken(token);
      retry();
    },
    [retry],
  );

  if (phase.kind === 'booting') {
    return (
      <main className="p-8 text-slate-700 dark:text-slate-200">
        <p role="status">Starting Agent Studio…</p>
      </main>
    );
  }
  if (phase.kind === 'problem')
    return (
      <Suspense fallback={null}>
        <BootProblemPage problem={phase.problem} onRetry={retry} onToken={submitToken} />
      </Suspense>
    );
  return (
    <StudioProviders client={phase.studio.client} http={phase.http}>
      <App connection={phase.connection} />
    </StudioProviders>
  );
}
