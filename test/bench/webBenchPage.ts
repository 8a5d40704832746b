/**
 * What the web benchmark injects into the page (before the app's own scripts) and how it reads
 * the results back. Everything runs in a requestAnimationFrame loop, so each time stamp is that
 * of the frame about to be painted:
 *  - every frame interval (rAF delta) with its wall-clock time;
 *  - the first frame in which each seq is the last one a timeline row shows (rows carry it in
 *    `data-last-seq`, and their first in `data-seq`; a seq folded into a row in the same frame
 *    as a later one, such as an assistant chunk followed by another, is not measured);
 *  - each time the newest row that is visible inside the timeline's scroller moves on.
 * Wall-clock `Date.now()` is used on both sides (bench and page run on one machine), so a
 * commit time from the bench and a paint time from the page can be subtracted.
 *
 * The script is a string, not a function: tsx's transform may wrap functions in helpers that do
 * not exist in the page.
 */
import type { Page } from 'playwright-core';

/** sessionStorage key of the app's token (src/app/bootstrap.ts TOKEN_KEY). */
export const WEB_TOKEN_KEY = 'agent-studio:token';

/** The init script: the token into sessionStorage (never into a URL), then the frame loop. */
export function webBenchInitScript(token: string, options: { longTasks?: boolean } = {}): string {
  return `(() => {
  try { sessionStorage.setItem(${JSON.stringify(WEB_TOKEN_KEY)}, ${JSON.stringify(token)}); } catch {}
  const longTasks = [];
  if (${options.longTasks ? 'true' : 'false'} && typeof PerformanceObserver === 'function') {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries())
        longTasks.push(Math.round(performance.timeOrigin + entry.startTime), Math.round(entry.duration));
    }).observe({ type: 'longtask', buffered: true });
  }
  const state = {
    frames: [],
    fresh: [],
    newest: [],
    seen: new Map(),
    maxVisible: 0,
    lastTs: 0,
    following: true,
    lost: [],
  };
  const loop = (ts) => {
    const now = Date.now();
    if (state.lastTs) state.frames.push(now, ts - state.lastTs);
    state.lastTs = ts;
    const feed = document.querySelector('[role="feed"]');
    if (feed) {
      const rows = feed.children;
      let candidates = null;
      for (let i = 0; i < rows.length; i += 1) {
        const seq = Number(rows[i].getAttribute('data-last-seq'));
        if (!seq) continue;
        if (!state.seen.has(seq)) {
          state.seen.set(seq, now);
          state.fresh.push(seq, now);
        }
        if (seq > state.maxVisible) (candidates ??= []).push([seq, rows[i]]);
      }
      // The timeline's "N new events" button sits next to the scroller: the view left the end.
      const following = !feed.parentElement.parentElement.querySelector(':scope > button');
      if (following !== state.following) {
        state.following = following;
        state.lost.push(now, following ? 0 : 1, state.maxVisible);
      }
      if (candidates) {
        const box = feed.parentElement.getBoundingClientRect();
        candidates.sort((a, b) => b[0] - a[0]);
        for (const [seq, row] of candidates) {
          const r = row.getBoundingClientRect();
          if (r.height > 0 && r.bottom > box.top && r.top < box.bottom) {
            state.maxVisible = seq;
            state.newest.push(now, seq);
            break;
          }
        }
      }
    }
    requestAnimationFrame(loop);
  };
  requestAnimationFrame(loop);
  window.__webBench = {
    longTasks: () => longTasks,
    maxVisible: () => state.maxVisible,
    following: () => state.following,
    drain: () => {
      const out = {
        frames: state.frames,
        fresh: state.fresh,
        newest: state.newest,
        lost: state.lost,
        maxVisible: state.maxVisible,
        following: state.following,
      };
      state.frames = [];
      state.fresh = [];
      state.newest = [];
      state.lost = [];
      return out;
    },
  };
})();`;
}

/** What the page recorded since the last drain (flat arrays: [wall, value, wall, value, …]). */
export interface WebPageSample {
  /** [wall ms, frame interval ms] per frame. */
  frames: number[];
  /** [seq, wall ms] for each seq first seen as the last seq of a row in the DOM. */
  fresh: number[];
  /** [wall ms, seq] each time the newest visible row moved on. */
  newest: number[];
  /** [wall ms, 1 when the view left the end or 0 when it came back, newest visible seq then]. */
  lost: number[];
  maxVisible: number;
  /** False while the timeline shows its "N new events" button (it stopped following). */
  following: boolean;
}

export async function webDrain(page: Page): Promise<WebPageSample> {
  return page.evaluate<WebPageSample>('window.__webBench.drain()');
}

/** The page's long tasks so far (BENCH_OPEN_TIMELINE): [wall ms at start, duration ms, …]. */
export async function webLongTasks(page: Page): Promise<number[]> {
  return page.evaluate<number[]>('window.__webBench.longTasks()');
}

export async function webMaxVisible(page: Page): Promise<number> {
  return page.evaluate<number>('window.__webBench ? window.__webBench.maxVisible() : 0');
}

export type WebCatchUp = 'caught up' | 'stopped following' | 'timed out';

/**
 * Waits until the newest visible row is at `seq` or past it, giving up early when the timeline
 * has stopped following the end (its "new events" button stays up for a second while the newest
 * visible row does not move): then no new row would ever scroll into view by itself.
 */
export async function webWaitForCatchUp(
  page: Page,
  seq: number,
  timeoutMs: number,
): Promise<WebCatchUp> {
  const deadline = Date.now() + timeoutMs;
  let stuckSince: number | null = null;
  let lastSeen = -1;
  while (Date.now() < deadline) {
    const { visible, following } = await page.evaluate<{ visible: number; following: boolean }>(
      '({ visible: window.__webBench.maxVisible(), following: window.__webBench.following() })',
    );
    if (visible >= seq) return 'caught up';
    if (following || visible !== lastSeen) stuckSince = null;
    else if (stuckSince === null) stuckSince = Date.now();
    else if (Date.now() - stuckSince > 1_000) return 'stopped following';
    lastSeen = visible;
    await new Promise((done) => setTimeout(done, 50));
  }
  return 'timed out';
}

/**
 * Waits until the newest visible row is at `seq` or past it; polls from Node (the page's own
 * loop does the per-frame work), so the wait costs the page almost nothing.
 */
export async function webWaitForVisible(
  page: Page,
  seq: number,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await webMaxVisible(page)) >= seq) return true;
    await new Promise((done) => setTimeout(done, 25));
  }
  return false;
}
