import { ErrorCode } from '../../../protocol/contract.ts';

/** Codes whose refusal means another tab or client holds control; the card offers to take it back. */
export const STALE_EPOCH = ErrorCode.CLIENT_EPOCH_STALE;

/**
 * What a refused approve/deny means, by `extensions.code`. Nothing is retried or queued: the
 * card says what happened and the human decides again from the current state.
 */
export function refusalText(code: string | null, message: string): string {
  switch (code) {
    case ErrorCode.APPROVAL_MISMATCH:
      return 'Refused: the call no longer matches what you saw (its argument hash or pending approval changed). Nothing was decided; review the card again.';
    case ErrorCode.APPROVAL_EXPIRED:
      return 'Refused: the approval expired before your decision arrived. The call did not run and nothing was denied.';
    case ErrorCode.CLIENT_EPOCH_STALE:
      return 'Refused: another tab or client has taken control of this session, so this tab’s decision was not applied.';
    case ErrorCode.APPROVAL_REVOKED:
      return 'Refused: the approval was revoked (arguments, context, control or project changed). The call did not run.';
    case ErrorCode.SESSION_CLOSED:
      return 'Refused: the session is closed.';
    default:
      return `Refused: ${message}`;
  }
}
