import { useCallback, useRef, useState } from 'react';
import { useMutation } from 'urql';
import { errorCode, makeIdempotencyKey, useSessionControl } from '../../graphql/attachment.ts';
import { ApproveToolMutation, RejectToolMutation } from './documents.ts';

export type DecisionAction = 'approve' | 'deny';

/** A decision the server refused, shown as what it is (by extensions.code). */
export interface Refusal {
  action: DecisionAction;
  code: string | null;
  message: string;
}

/**
 * Approve or deny one pending approval. The first action of a tab that is not attached waits
 * for the human to accept the fencing notice (`confirming`), then attaches via ensureAttached()
 * and sends the exact `argumentHash` the card shows. One decision is in flight at a time; a
 * refusal is reported, never retried or queued.
 */
export function useApprovalDecision({
  sessionId,
  toolCallId,
  argumentHash,
}: {
  sessionId: string;
  toolCallId: string;
  argumentHash: string;
}) {
  const control = useSessionControl(sessionId);
  const [, approve] = useMutation(ApproveToolMutation);
  const [, reject] = useMutation(RejectToolMutation);
  const [confirming, setConfirming] = useState<{ action: DecisionAction; reason: string } | null>(
    null,
  );
  const [sending, setSending] = useState<DecisionAction | null>(null);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [controlError, setControlError] = useState<string | null>(null);
  // A ref, not state: two key presses in one frame must not both send.
  const inFlight = useRef(false);

  const send = useCallback(
    async (action: DecisionAction, reason: string) => {
      if (inFlight.current) return;
      inFlight.current = true;
      setConfirming(null);
      setRefusal(null);
      setControlError(null);
      setSending(action);
      try {
        let clientEpoch: string;
        try {
          clientEpoch = await control.ensureAttached();
        } catch (error) {
          setControlError(
            `Could not attach to the session: ${error instanceof Error ? error.message : String(error)}`,
          );
          return;
        }
        const trimmed = reason.trim();
        const input = {
          idempotencyKey: makeIdempotencyKey(action === 'approve' ? 'approveTool' : 'rejectTool'),
          sessionId,
          clientEpoch,
          toolCallId,
          argumentHash,
          ...(action === 'deny' && trimmed ? { reason: trimmed } : {}),
        };
        const result = action === 'approve' ? await approve({ input }) : await reject({ input });
        if (result.error) {
          setRefusal({
            action,
            code: errorCode(result.error),
            message: result.error.graphQLErrors[0]?.message ?? result.error.message,
          });
        }
      } finally {
        inFlight.current = false;
        setSending(null);
      }
    },
    [control, sessionId, toolCallId, argumentHash, approve, reject],
  );

  /** Ask to approve or deny: sends at once when attached, else shows the fencing notice first. */
  const request = useCallback(
    (action: DecisionAction, reason = '') => {
      if (inFlight.current || control.state === 'fenced' || control.state === 'attaching') return;
      if (control.state !== 'attached') {
        setConfirming({ action, reason });
        return;
      }
      void send(action, reason);
    },
    [control.state, send],
  );

  const confirm = useCallback(() => {
    if (confirming) void send(confirming.action, confirming.reason);
  }, [confirming, send]);

  const takeControlBack = useCallback(async () => {
    setControlError(null);
    try {
      await control.takeControl();
      setRefusal(null);
    } catch (error) {
      setControlError(
        `Could not take control: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }, [control]);

  return {
    control,
    confirming,
    sending,
    refusal,
    controlError,
    request,
    confirm,
    cancel: () => setConfirming(null),
    takeControlBack,
  };
}

export type ApprovalDecision = ReturnType<typeof useApprovalDecision>;
