import { useQuery } from 'urql';
import { SessionQuery, type SessionSummary } from './documents.ts';

/** One session (cache-first; studioSessionUpdates and the event stream keep it current). */
export function useSession(sessionId: string): {
  session: SessionSummary | null;
  fetching: boolean;
  error: string | null;
} {
  const [{ data, fetching, error }] = useQuery({ query: SessionQuery, variables: { sessionId } });
  return {
    session: data?.crowdyStudioAgentSession ?? null,
    fetching,
    error: error ? (error.graphQLErrors[0]?.message ?? error.message) : null,
  };
}
