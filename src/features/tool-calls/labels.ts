import type { ApprovalStatus, ToolCallStatus, ToolRisk } from '../../../protocol/events.ts';

export type Tone = 'neutral' | 'active' | 'waiting' | 'good' | 'bad' | 'muted';

/** Label and tone of every tool-call status; a new status is a compile error here, not a blank badge. */
export const TOOL_CALL_STATUS: Record<ToolCallStatus, { label: string; tone: Tone }> = {
  PROPOSED: { label: 'Proposed', tone: 'neutral' },
  WAITING_FOR_APPROVAL: { label: 'Waiting for approval', tone: 'waiting' },
  DISPATCHED: { label: 'Dispatched', tone: 'active' },
  RUNNING: { label: 'Running', tone: 'active' },
  SUCCEEDED: { label: 'Succeeded', tone: 'good' },
  FAILED: { label: 'Failed', tone: 'bad' },
  DENIED: { label: 'Denied', tone: 'bad' },
  TIMED_OUT: { label: 'Timed out', tone: 'bad' },
  CANCELLED: { label: 'Cancelled', tone: 'muted' },
  STALE: { label: 'Stale (fenced)', tone: 'muted' },
  OUTCOME_UNKNOWN: { label: 'Outcome unknown', tone: 'bad' },
};

/** What each approval status means on the card. */
export const APPROVAL_STATUS: Record<ApprovalStatus, string> = {
  PENDING: 'Waiting for a decision',
  GRANTED: 'Approved',
  CONSUMED: 'Approved and used',
  DENIED: 'Denied',
  REVOKED: 'Revoked before it ran',
  EXPIRED: 'Expired',
};

/** Risk classes that deserve a warning colour. */
export const HIGH_RISK: ReadonlySet<ToolRisk> = new Set([
  'DESTRUCTIVE',
  'IRREVERSIBLE',
  'ECONOMIC',
  'TRUST_CONSENT',
  'WORLD_CONTROL',
]);

export const TONE_CLASS: Record<Tone, string> = {
  neutral:
    'bg-slate-100 text-slate-800 ring-slate-300 dark:bg-slate-800 dark:text-slate-100 dark:ring-slate-600',
  active:
    'bg-blue-100 text-blue-900 ring-blue-300 dark:bg-blue-950 dark:text-blue-100 dark:ring-blue-700',
  waiting:
    'bg-amber-100 text-amber-950 ring-amber-400 dark:bg-amber-950 dark:text-amber-100 dark:ring-amber-600',
  good: 'bg-emerald-100 text-emerald-900 ring-emerald-300 dark:bg-emerald-950 dark:text-emerald-100 dark:ring-emerald-700',
  bad: 'bg-red-100 text-red-900 ring-red-300 dark:bg-red-950 dark:text-red-100 dark:ring-red-700',
  muted:
    'bg-slate-50 text-slate-600 ring-slate-200 dark:bg-slate-900 dark:text-slate-400 dark:ring-slate-700',
};
