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
 * Approve or deny one pending approval. Like every action, it attaches at once when this tab is
 * not in control (ensureAttached(), no extra confirmation step; the one-time control notice says
 * what that means) and sends the exact `argumentHash` the card shows. One decision is in flight at
 * a time; a refusal is reported, never retried or queued.
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
  const [sending, setSending] = useState<DecisionAction | null>(null);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [controlError, setControlError] = useState<string | null>(null);
  // Whether this card acted: only then does it show the one-time control notice.
  const [acted, setActed] = useState(false);
  // A ref, not state: two key presses in one frame must not both send.
  const inFlight = useRef(false);

  const send = useCallback(
    async (action: DecisionAction, reason: string) => {
      if (inFlight.current) return;
      inFlight.current = true;
      setActed(true);
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

  /** Approve or deny now (attaching first when this tab only watches). */
  const request = useCallback(
    (action: DecisionAction, reason = '') => {
      if (inFlight.current || control.state === 'fenced' || control.state === 'attaching') return;
      void send(action, reason);
    },
    [control.state, send],
  );

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
    acted,
    sending,
    refusal,
    controlError,
    request,
    takeControlBack,
  };
}

export type ApprovalDecision = ReturnType<typeof useApprovalDecision>;
