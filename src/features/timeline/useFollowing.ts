import { useCallback, useEffect, useRef, useState, type RefObject } from 'react';

/** Keys that scroll a focused scroller towards its start. */
const UP_KEYS = new Set(['PageUp', 'ArrowUp', 'Home']);

/** Where `scrollend` is missing, scrolling has come to rest after this long without a scroll. */
const SCROLL_REST_MS = 150;

/** True for elements that take typed keys (j/k and arrows belong to them there). */
export function isEditable(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  return ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

export interface Following {
  /** Whether the view follows the end, for rendering. */
  following: boolean;
  /** The same, current within the task that changed it (for layout effects and handlers). */
  followingRef: RefObject<boolean>;
  setFollowing(value: boolean): void;
}

/**
 * Whether a scroller follows its end as content arrives. It is a state, not a distance: only
 * the reader's own scrolling turns it off (wheel up, PageUp/ArrowUp/Home, dragging the
 * scrollbar, a touch drag, following a link), and the caller turns it off for its own moves
 * (j/k, a linked event) and on for "jump to newest". Content growing by any amount, rows being
 * measured or pages loading never change it. When the reader's scrolling comes to rest within
 * the end threshold (`isAtEnd`), following resumes.
 */
export function useFollowing(
  scrollRef: RefObject<HTMLElement | null>,
  isAtEnd: () => boolean,
  initial: boolean,
): Following {
  const [following, setState] = useState(initial);
  const followingRef = useRef(initial);
  const setFollowing = useCallback((value: boolean) => {
    followingRef.current = value;
    setState(value);
  }, []);
  const isAtEndRef = useRef(isAtEnd);
  useEffect(() => {
    isAtEndRef.current = isAtEnd;
  }, [isAtEnd]);

  useEffect(() => {
    const element = scrollRef.current;
    if (!element) return undefined;
    const leave = () => {
      if (followingRef.current) setFollowing(false);
    };
    const onWheel = (event: WheelEvent) => {
      if (event.deltaY < 0 && element.scrollTop > 0) leave();
    };
    const onKeyDown = (event: KeyboardEvent) => {
      if (UP_KEYS.has(event.key) && !isEditable(event.target)) leave();
    };
    // A press on the scroller itself, not on a row inside it, is a press on its scrollbar.
    const onPointerDown = (event: PointerEvent) => {
      if (event.target === element) leave();
    };
    const onClick = (event: MouseEvent) => {
      if (event.target instanceof Element && event.target.closest('a[href]')) leave();
    };
    const onRest = () => {
      if (!followingRef.current && isAtEndRef.current()) setFollowing(true);
    };
    let restTimer: ReturnType<typeof setTimeout> | undefined;
    const onScroll = () => {
      clearTimeout(restTimer);
      restTimer = setTimeout(onRest, SCROLL_REST_MS);
    };
    const restEvent = 'onscrollend' in element ? 'scrollend' : 'scroll';
    const restListener = restEvent === 'scrollend' ? onRest : onScroll;
    const passive = { passive: true } as const;
    element.addEventListener('wheel', onWheel, passive);
    element.addEventListener('touchmove', leave, passive);
    element.addEventListener('keydown', onKeyDown);
    element.addEventListener('pointerdown', onPointerDown);
    element.addEventListener('click', onClick);
    element.addEventListener(restEvent, restListener, passive);
    return () => {
      clearTimeout(restTimer);
      element.removeEventListener('wheel', onWheel);
      element.removeEventListener('touchmove', leave);
      element.removeEventListener('keydown', onKeyDown);
      element.removeEventListener('pointerdown', onPointerDown);
      element.removeEventListener('click', onClick);
      element.removeEventListener(restEvent, restListener);
    };
  }, [scrollRef, setFollowing]);

  return { following, followingRef, setFollowing };
}
