import { useCallback, useSyncExternalStore } from 'react';

/**
 * Whether a CSS media query matches now; re-renders when it changes. Where `matchMedia` does
 * not exist (jsdom) it answers `fallback`.
 */
export function useMediaQuery(query: string, fallback = true): boolean {
  const subscribe = useCallback(
    (onChange: () => void) => {
      if (typeof matchMedia !== 'function') return () => undefined;
      const list = matchMedia(query);
      list.addEventListener('change', onChange);
      return () => list.removeEventListener('change', onChange);
    },
    [query],
  );
  const read = () => (typeof matchMedia === 'function' ? matchMedia(query).matches : fallback);
  return useSyncExternalStore(subscribe, read, () => fallback);
}

/** The width from which the sessions sidebar stays beside the page instead of being a drawer. */
export const WIDE_QUERY = '(min-width: 900px)';
