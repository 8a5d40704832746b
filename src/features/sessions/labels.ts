import type { AgentMode, RunStatus, SessionStatus } from '../../../protocol/events.ts';
import { TERMINAL_RUN_STATUSES } from '../../../protocol/events.ts';

export const SESSION_STATUS: Record<SessionStatus, { label: string; className: string }> = {
  ACTIVE: { label: 'Active', className: 'text-emerald-800 dark:text-emerald-300' },
  PAUSED: { label: 'Paused', className: 'text-amber-800 dark:text-amber-300' },
  CLOSED: { label: 'Closed', className: 'text-slate-600 dark:text-slate-400' },
  REVOKED: { label: 'Revoked', className: 'text-red-800 dark:text-red-300' },
};

export const MODE_LABEL: Record<AgentMode, string> = {
  ASK: 'Ask',
  BUILD: 'Build',
  PLAY: 'Play',
};

export const RUN_STATUS_LABEL: Record<RunStatus, string> = {
  QUEUED: 'Queued',
  RUNNING: 'Running',
  WAITING_FOR_TOOL: 'Waiting for a tool',
  WAITING_FOR_APPROVAL: 'Waiting for approval',
  PAUSED: 'Paused',
  SUCCEEDED: 'Succeeded',
  FAILED: 'Failed',
  CANCELLED: 'Cancelled',
  PREEMPTED: 'Preempted',
};

/** True while a run is in flight (not finished). */
export function isRunning(status: string | null | undefined): boolean {
  return !!status && !TERMINAL_RUN_STATUSES.has(status as RunStatus);
}
