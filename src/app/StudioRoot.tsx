import { useCallback, useEffect, useState } from 'react';
import { Provider } from 'urql';
import { makeStudioClient, type StudioClient } from '../graphql/client.ts';
import { makeConnectionStore, type ConnectionStore } from '../graphql/connectionStore.ts';
import { App } from './App.tsx';
import { bootstrap, forgetToken, type BootProblem } from './bootstrap.ts';
import { BootProblemPage } from './BootProblemPage.tsx';

type Phase =
  | { kind: 'booting' }
  | { kind: 'problem'; problem: BootProblem }
  | { kind: 'ready'; studio: StudioClient; connection: ConnectionStore };

/** Boots (token, config, token check), then provides the one urql Client to the app. */
export function StudioRoot() {
  const [phase, setPhase] = useState<Phase>({ kind: 'booting' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let cancelled = false;
    let studio: StudioClient | null = null;
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
          forgetToken();
          void studio?.dispose();
          setPhase({ kind: 'problem', problem: { kind: 'rejectedToken' } });
        },
      });
      setPhase({ kind: 'ready', studio, connection });
    });
    return () => {
      cancelled = true;
      void studio?.dispose();
    };
  }, [attempt]);

  const retry = useCallback(() => {
    setPhase({ kind: 'booting' });
    setAttempt((n) => n + 1);
  }, []);

  if (phase.kind === 'booting') {
    return (
      <main className="p-8 text-slate-700 dark:text-slate-200">
        <p role="status">Starting Agent Studio…</p>
      </main>
    );
  }
  if (phase.kind === 'problem') return <BootProblemPage problem={phase.problem} onRetry={retry} />;
  return (
    <Provider value={phase.studio.client}>
      <App connection={phase.connection} />
    </Provider>
  );
}
