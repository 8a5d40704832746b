import { Suspense, useCallback, useEffect, useState } from 'react';
import { makeStudioClient, type StudioClient } from '../graphql/client.ts';
import { makeConnectionStore, type ConnectionStore } from '../graphql/connectionStore.ts';
import { makeStudioHttp, type StudioHttp } from '../graphql/studioHttp.ts';
import { queryClientOf } from '../graphql/StudioHttpProvider.tsx';
import { App } from './App.tsx';
import {
  bootstrap,
  forgetToken,
  locationHasToken,
  rememberToken,
  takeTokenFromLocation,
  type BootProblem,
} from './bootstrap.ts';
import { shareTokenWithNewTabs } from './tokenHandoff.ts';
import { BootProblemPage } from './lazyRoutes.tsx';
import { StudioProviders } from './StudioProviders.tsx';

type Phase =
  | { kind: 'booting' }
  | { kind: 'problem'; problem: BootProblem }
  | {
      kind: 'ready';
      studio: StudioClient;
      connection: ConnectionStore;
      http: StudioHttp;
      token: string;
    };

/**
 * Boots (token, config, token check), then provides the one urql Client, the QueryClient and
 * the HTTP client for /healthz and /api/blobs (same endpoint origin, same token) to the app.
 */
export function StudioRoot() {
  const [phase, setPhase] = useState<Phase>({ kind: 'booting' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let cancelled = false;
    let studio: StudioClient | null = null;
    let http: StudioHttp | null = null;
    let stopSharing: (() => void) | null = null;
    void bootstrap().then((result) => {
      if (cancelled) return;
      if (!result.ok) {
        setPhase({ kind: 'problem', problem: result.problem });
        return;
      }
      const connection = makeConnectionStore();
      studio = makeStudioClient({
        endpoint: result.endpoint,
        token: result.token,
        onConnection: (status, detail) => connection.set({ status, detail }),
        onUnauthorized: () => {
          stopSharing?.();
          forgetToken();
          void studio?.dispose();
          setPhase({ kind: 'problem', problem: { kind: 'rejectedToken' } });
        },
      });
      http = makeStudioHttp({ endpoint: result.endpoint, token: result.token });
      // The server accepted this token: new tabs of this origin may ask for it.
      stopSharing = shareTokenWithNewTabs(result.token);
      setPhase({ kind: 'ready', studio, connection, http, token: result.token });
    });
    return () => {
      cancelled = true;
      stopSharing?.();
      void studio?.dispose();
      if (http) queryClientOf(http)?.clear();
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
