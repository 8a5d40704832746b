import { usePathname } from '../ui/router.tsx';

/** Every screen the studio can link to. */
export type Route =
  | { name: 'home' }
  | { name: 'session'; sessionId: string }
  | { name: 'event'; sessionId: string; seq: string }
  | { name: 'checkpoints'; sessionId: string }
  /** The checkpoint browser with one checkpoint's restore open (the history scrubber links here). */
  | { name: 'checkpointRestore'; sessionId: string; checkpointId: string }
  | { name: 'inbox' }
  | { name: 'rules' }
  | { name: 'notFound'; path: string };

const SEQ = /^(0|[1-9][0-9]{0,39})$/;

function decode(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}

/** Parses a pathname into a route (the router is history based: no hash routes). */
export function parseRoute(pathname: string): Route {
  const parts = pathname.split('/').filter(Boolean);
  if (parts.length === 0) return { name: 'home' };
  if (parts.length === 1 && parts[0] === 'inbox') return { name: 'inbox' };
  if (parts.length === 1 && parts[0] === 'rules') return { name: 'rules' };
  if (parts[0] === 'sessions' && parts[1]) {
    const sessionId = decode(parts[1]);
    if (sessionId !== null) {
      if (parts.length === 2) return { name: 'session', sessionId };
      if (parts.length === 3 && parts[2] === 'checkpoints')
        return { name: 'checkpoints', sessionId };
      if (parts.length === 5 && parts[2] === 'checkpoints' && parts[4] === 'restore' && parts[3]) {
        const checkpointId = decode(parts[3]);
        if (checkpointId !== null) return { name: 'checkpointRestore', sessionId, checkpointId };
      }
      if (parts.length === 4 && parts[2] === 'events' && parts[3] && SEQ.test(parts[3])) {
        return { name: 'event', sessionId, seq: parts[3] };
      }
    }
  }
  return { name: 'notFound', path: pathname };
}

/** The path of a route (inverse of parseRoute). */
export function pathOf(route: Route): string {
  switch (route.name) {
    case 'home':
      return '/';
    case 'inbox':
      return '/inbox';
    case 'rules':
      return '/rules';
    case 'session':
      return `/sessions/${encodeURIComponent(route.sessionId)}`;
    case 'checkpoints':
      return `/sessions/${encodeURIComponent(route.sessionId)}/checkpoints`;
    case 'checkpointRestore':
      return `/sessions/${encodeURIComponent(route.sessionId)}/checkpoints/${encodeURIComponent(route.checkpointId)}/restore`;
    case 'event':
      return `/sessions/${encodeURIComponent(route.sessionId)}/events/${route.seq}`;
    case 'notFound':
      return route.path;
  }
}

/** The current route; re-renders on navigation and on back/forward. */
export function useRoute(): Route {
  return parseRoute(usePathname());
}
