import { useEffect, useState } from 'react';

/** The current time in ms, re-rendering every `intervalMs` while `active`. */
export function useNow(intervalMs = 1000, active = true): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return undefined;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs, active]);
  return now;
}

/**
 * Time left until an ISO `deadline`, ticking every second until it passes. `expired` turns true
 * exactly once the local clock reaches the deadline; an unparsable deadline never expires here.
 */
export function useDeadline(deadline: string | null | undefined): {
  remainingMs: number;
  expired: boolean;
} {
  const at = deadline ? Date.parse(deadline) : Number.NaN;
  const [now, setNow] = useState(() => Date.now());
  const expired = Number.isFinite(at) && now >= at;
  useEffect(() => {
    if (!Number.isFinite(at)) return undefined;
    const tick = () => setNow(Date.now());
    tick();
    if (Date.now() >= at) return undefined;
    const timer = setInterval(() => {
      tick();
      if (Date.now() >= at) clearInterval(timer);
    }, 1000);
    return () => clearInterval(timer);
  }, [at]);
  return { remainingMs: Number.isFinite(at) ? Math.max(0, at - now) : Number.NaN, expired };
}

/** `1:05` for 65 000 ms; `1:02:03` past an hour. */
export function formatRemaining(ms: number): string {
  const total = Math.ceil(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

function spoken(ms: number): string {
  const total = Math.ceil(ms / 1000);
  const m = Math.floor(total / 60);
  const s = total % 60;
  return m > 0 ? `${m} min ${s} s` : `${s} s`;
}

/**
 * A live countdown to `to` (ISO time). Styled as a warning under `warnBelowMs`; says `expired`
 * once the time has passed. `role="timer"` keeps screen readers from announcing every tick.
 */
export function Countdown({
  to,
  warnBelowMs = 20_000,
  className = '',
}: {
  to: string;
  warnBelowMs?: number;
  className?: string;
}) {
  const { remainingMs, expired } = useDeadline(to);
  if (Number.isNaN(remainingMs)) {
    return <span className={className}>unknown expiry</span>;
  }
  const tone = expired
    ? 'text-slate-500 dark:text-slate-400'
    : remainingMs < warnBelowMs
      ? 'font-semibold text-red-700 dark:text-red-400'
      : 'text-slate-800 dark:text-slate-100';
  return (
    <time
      role="timer"
      dateTime={to}
      title={to}
      aria-label={expired ? 'expired' : `expires in ${spoken(remainingMs)}`}
      className={`font-mono tabular-nums ${tone} ${className}`}
    >
      {expired ? 'expired' : formatRemaining(remainingMs)}
    </time>
  );
}
