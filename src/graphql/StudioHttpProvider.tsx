import { createContext, useContext, type ReactNode } from 'react';
import type { StudioHttp } from './studioHttp.ts';

const StudioHttpContext = createContext<StudioHttp | null>(null);

/** Provides the client for /healthz and /api/blobs (src/app makes it with the urql Client). */
export function StudioHttpProvider({
  value,
  children,
}: {
  value: StudioHttp;
  children: ReactNode;
}) {
  return <StudioHttpContext.Provider value={value}>{children}</StudioHttpContext.Provider>;
}

/** The studio's non-GraphQL client; throws when no StudioHttpProvider is above (a wiring bug). */
export function useStudioHttp(): StudioHttp {
  const http = useContext(StudioHttpContext);
  if (!http) throw new Error('useStudioHttp needs a StudioHttpProvider above it.');
  return http;
}
