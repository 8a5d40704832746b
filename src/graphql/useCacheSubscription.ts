import { useEffect } from 'react';
import { useClient, type AnyVariables, type DocumentInput } from 'urql';

/**
 * Keeps a subscription open for what its results write into Graphcache (their updaters), without
 * re-rendering the component that holds it on each result, as `useSubscription` does (a new
 * state object per result, once per frame while a session streams). Components read what the
 * results changed through their own queries, which re-render only when their data changed.
 */
export function useCacheSubscription<Data, Variables extends AnyVariables>(
  query: DocumentInput<Data, Variables>,
  variables: Variables,
): void {
  const client = useClient();
  const key = JSON.stringify(variables);
  useEffect(() => {
    const subscription = client
      .subscription(query, JSON.parse(key) as Variables)
      .subscribe(() => undefined);
    return () => subscription.unsubscribe();
  }, [client, query, key]);
}
