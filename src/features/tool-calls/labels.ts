import type { ApprovalStatus, ToolCallStatus, ToolRisk } from '../../../protocol/events.ts';

export type Tone =
  'neutral' | 'active' | 'waiting' | 'good' | 'bad' | 'muted' | 'expired' | 'revoked';

export interface StatusLabel {
  label: string;
  tone: Tone;
  /** A glyph beside the words (aria-hidden: the words carry the meaning). */
  icon: string;
}

/** Label, tone and icon of every tool-call status; a new status is a compile error here, not a blank badge. */
export const TOOL_CALL_STATUS: Record<ToolCallStatus, StatusLabel> = {
  PROPOSED: { label: 'Proposed', tone: 'neutral', icon: '•' },
  WAITING_FOR_APPROVAL: { label: 'Waiting for approval', tone: 'waiting', icon: '⏳' },
  DISPATCHED: { label: 'Dispatched', tone: 'active', icon: '➜' },
  RUNNING: { label: 'Running', tone: 'active', icon: '▶' },
  SUCCEEDED: { label: 'Succeeded', tone: 'good', icon: '✓' },
  FAILED: { label: 'Failed', tone: 'bad', icon: '✗' },
  DENIED: { label: 'Denied', tone: 'bad', icon: '⛔' },
  TIMED_OUT: { label: 'Timed out', tone: 'bad', icon: '⌛' },
  CANCELLED: { label: 'Cancelled', tone: 'muted', icon: '■' },
  STALE: { label: 'Stale (fenced)', tone: 'muted', icon: '⇄' },
  OUTCOME_UNKNOWN: { label: 'Outcome unknown', tone: 'bad', icon: '?' },
};

/**
 * The badge of a call whose approval ended it: denied, expired and revoked read differently
 * from each other and from a plain cancelled or failed call (words, colour and icon).
 */
export const APPROVAL_BADGE: Record<ApprovalStatus, StatusLabel | null> = {
  PENDING: null,
  GRANTED: null,
  CONSUMED: null,
  DENIED: { label: 'Denied', tone: 'bad', icon: '⛔' },
  EXPIRED: { label: 'Approval expired', tone: 'expired', icon: '⌛' },
  REVOKED: { label: 'Revoked', tone: 'revoked', icon: '⊘' },
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

/** Who made a decision, in words ("the human" only when a person's token did). */
export function decidedByWords(approval: {
  studioRuleName?: string | null;
  studioDecidedBy?: string | null;
  studioAutomatic: boolean;
}): string {
  if (approval.studioRuleName) return `by rule “${approval.studioRuleName}”`;
  if (approval.studioDecidedBy) return `by ${approval.studioDecidedBy}`;
  if (approval.studioAutomatic) return 'automatically by the source';
  return '';
}

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
  expired:
    'bg-orange-50 text-orange-900 ring-orange-300 dark:bg-orange-950 dark:text-orange-100 dark:ring-orange-700',
  revoked:
    'bg-violet-100 text-violet-900 ring-violet-300 dark:bg-violet-950 dark:text-violet-100 dark:ring-violet-700',
};
