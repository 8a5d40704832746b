import { useEffect, useId, useRef } from 'react';
import { MAX_DECISION_REASON } from '../../../protocol/contract.ts';
import { CopyButton } from '../../ui/CopyButton.tsx';
import { Countdown } from '../../ui/Countdown.tsx';
import { ControlNotice } from '../../ui/ControlNotice.tsx';
import { SafeText } from '../../ui/SafeText.tsx';
import { refusalText, STALE_EPOCH } from './decisionRefusals.ts';
import type { ApprovalDecision } from './useApprovalDecision.ts';

const button =
  'rounded px-3 py-1.5 text-sm font-medium focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 disabled:cursor-not-allowed disabled:opacity-50';

/**
 * The live part of a pending approval: reasons, the exact argument hash, the countdown, Approve
 * and Deny (with an optional reason), the fencing notice and any refusal. Rendered only while
 * the approval can still be decided.
 */
export function ApprovalPrompt({
  reasons,
  argumentHash,
  expiresAt,
  decision,
  denyOpen,
  denyReason,
  onDenyOpen,
  onDenyReason,
  onDenyClose,
  armed = null,
  armedNeeded = false,
}: {
  /** The risk word while a first A press waits for the second (high-risk calls). */
  armed?: string | null;
  armedNeeded?: boolean;
  reasons: readonly string[];
  argumentHash: string;
  expiresAt: string;
  decision: ApprovalDecision;
  denyOpen: boolean;
  denyReason: string;
  onDenyOpen: () => void;
  onDenyReason: (reason: string) => void;
  onDenyClose: () => void;
}) {
  const reasonId = useId();
  const reasonRef = useRef<HTMLTextAreaElement>(null);
  const denyRef = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(denyOpen);
  const { control, sending } = decision;
  const fenced = control.state === 'fenced';
  const busy = sending !== null || control.state === 'attaching';

  // Opening puts focus in the reason; closing (Escape or Cancel) gives it back to Deny…, which
  // replaces the form, so focus never falls to the page. The reason itself lives in the card.
  useEffect(() => {
    if (denyOpen) reasonRef.current?.focus();
    else if (wasOpen.current) denyRef.current?.focus();
    wasOpen.current = denyOpen;
  }, [denyOpen]);

  return (
    <section
      aria-label="Approval needed"
      className="space-y-2 rounded border border-amber-400 bg-amber-50 p-2 dark:border-amber-600 dark:bg-amber-950/40"
    >
      <div className="flex flex-wrap items-center gap-2 text-sm">
        <span className="font-semibold">Approval needed</span>
        <span>
          Expires in <Countdown to={expiresAt} />
        </span>
      </div>
      {reasons.length > 0 ? (
        <div className="text-sm">
          <span className="font-medium">Why it asks:</span>
          <ul className="ml-5 list-disc">
            {reasons.map((reason, index) => (
              <li key={index}>
                <SafeText text={reason} className="whitespace-pre-wrap break-words" />
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <div className="flex flex-wrap items-center gap-2 text-sm">
        <span className="font-medium">Approving exactly arguments</span>
        <code
          className="break-all rounded bg-white px-1 font-mono text-xs dark:bg-slate-900"
          aria-label="Argument hash being approved"
        >
          <SafeText text={argumentHash} />
        </code>
        <CopyButton text={argumentHash} label="argument hash being approved" />
      </div>

      {fenced ? (
        <div
          role="alert"
          className="rounded bg-red-100 p-2 text-sm text-red-900 dark:bg-red-950 dark:text-red-100"
        >
          Another tab or client has taken control of this session; decisions from this tab would be
          refused.
          <button
            type="button"
            className={`${button} ml-2 bg-red-700 text-white hover:bg-red-800`}
            onClick={() => void decision.takeControlBack()}
          >
            Take control back
          </button>
          <span className="ml-1 text-xs">(this fences the other tab or client)</span>
        </div>
      ) : null}

      {armed ? (
        <p role="alert" className="text-sm font-semibold text-red-900 dark:text-red-200">
          This call is {armed}: press <kbd>A</kbd> again to approve it, any other key to cancel.
        </p>
      ) : null}
      <div className="flex flex-wrap items-center gap-2">
        <button
          type="button"
          aria-keyshortcuts="A"
          disabled={busy || fenced}
          onClick={() => decision.request('approve')}
          className={`${button} bg-emerald-700 text-white hover:bg-emerald-800`}
        >
          {sending === 'approve' ? 'Approving…' : 'Approve'}
        </button>
        {!denyOpen ? (
          <button
            ref={denyRef}
            type="button"
            aria-keyshortcuts="D"
            disabled={busy || fenced}
            onClick={onDenyOpen}
            className={`${button} bg-red-700 text-white hover:bg-red-800`}
          >
            Deny…
          </button>
        ) : null}
        <span className="text-xs text-slate-600 dark:text-slate-400">
          Shortcuts on this card or its selected row: <kbd>A</kbd> approve
          {armedNeeded ? ' (twice: it is high risk)' : ''}, <kbd>D</kbd> deny.
        </span>
      </div>

      {denyOpen ? (
        <form
          className="space-y-1"
          onSubmit={(event) => {
            event.preventDefault();
            decision.request('deny', denyReason);
          }}
          onKeyDown={(event) => {
            // Escape anywhere in the form closes it (keeping the reason); an IME composition
            // uses Escape for itself, and nothing further up should also act on this one.
            if (event.key !== 'Escape' || event.nativeEvent.isComposing) return;
            event.preventDefault();
            event.stopPropagation();
            onDenyClose();
          }}
        >
          <label htmlFor={reasonId} className="block text-sm font-medium">
            Reason for denying (optional, up to {MAX_DECISION_REASON} characters)
          </label>
          <textarea
            id={reasonId}
            ref={reasonRef}
            value={denyReason}
            maxLength={MAX_DECISION_REASON}
            rows={2}
            onChange={(event) => onDenyReason(event.target.value)}
            className="w-full rounded border border-slate-300 bg-white p-1 text-sm dark:border-slate-600 dark:bg-slate-900"
          />
          <div className="flex items-center gap-2">
            <button
              type="submit"
              disabled={busy || fenced}
              className={`${button} bg-red-700 text-white hover:bg-red-800`}
            >
              {sending === 'deny' ? 'Denying…' : 'Deny call'}
            </button>
            <button
              type="button"
              onClick={onDenyClose}
              className={`${button} border border-slate-300 dark:border-slate-600`}
            >
              Cancel
            </button>
            <span className="text-xs text-slate-600 dark:text-slate-400">
              {denyReason.length}/{MAX_DECISION_REASON}
            </span>
          </div>
        </form>
      ) : null}
    </section>
  );
}

/**
 * A refused decision (by extensions.code) and attach problems. Lives outside the prompt so it
 * stays visible when the approval then expires or changes.
 */
export function RefusalNotice({
  decision,
  showControlError = true,
}: {
  decision: ApprovalDecision;
  /** The session-wide attach error belongs only on cards that can still be decided. */
  showControlError?: boolean;
}) {
  const { control } = decision;
  const fenced = control.state === 'fenced';
  const controlError = showControlError ? (decision.controlError ?? control.error) : null;
  const notice = decision.acted ? control.notice : null;
  if (!decision.refusal && !controlError && !notice) return null;
  return (
    <div className="space-y-1">
      {notice ? <ControlNotice notice={notice} onDismiss={() => control.dismissNotice()} /> : null}
      {decision.refusal ? (
        <div
          role="alert"
          className="rounded bg-red-100 p-2 text-sm text-red-900 dark:bg-red-950 dark:text-red-100"
        >
          {decision.refusal.code ? (
            <code className="mr-1 font-mono font-semibold">{decision.refusal.code}</code>
          ) : null}
          <SafeText text={refusalText(decision.refusal.code, decision.refusal.message)} />
          {decision.refusal.code === STALE_EPOCH && !fenced ? (
            <span className="ml-2">
              <button
                type="button"
                className={`${button} bg-red-700 text-white hover:bg-red-800`}
                onClick={() => void decision.takeControlBack()}
              >
                Take control back
              </button>
              <span className="ml-1 text-xs">
                (this fences the other tab or client; your decision is not resent)
              </span>
            </span>
          ) : null}
        </div>
      ) : null}
      {controlError ? (
        <p role="alert" className="text-sm text-red-800 dark:text-red-300">
          <SafeText text={controlError} />
        </p>
      ) : null}
    </div>
  );
}
