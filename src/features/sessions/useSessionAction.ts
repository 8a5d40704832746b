import { useCallback, useEffect, useState } from 'react';
import { useClient } from 'urql';
import type { CombinedError } from '@urql/core';
import { ErrorCode } from '../../../protocol/contract.ts';
import { errorCode, makeIdempotencyKey, useSessionControl } from '../../graphql/attachment.ts';

export interface ActionState {
  running: boolean;
  error: string | null;
}

/**
 * Runs one control action of a session: attach if needed, send the mutation once with a fresh
 * idempotency key, and report a refusal as it is. Nothing is retried or queued.
 */
export function useSessionAction(sessionId: string) {
  const client = useClient();
  const control = useSessionControl(sessionId);
  const [state, setState] = useState<ActionState>({ running: false, error: null });
  // A refusal belongs to the moment it happened: once the tab's control changes (it regained
  // control, or re-attached after a reconnect) the old line would only mislead.
  useEffect(() => {
    setState((current) => (current.error ? { ...current, error: null } : current));
  }, [control.state]);

  const run = useCallback(
    async (
      operation: string,
      send: (input: {
        idempotencyKey: string;
        sessionId: string;
        clientEpoch: string;
      }) => Promise<{ error?: CombinedError }>,
    ): Promise<boolean> => {
      setState({ running: true, error: null });
      try {
        const clientEpoch = await control.ensureAttached();
        const result = await send({
          idempotencyKey: makeIdempotencyKey(operation),
          sessionId,
          clientEpoch,
        });
        if (result.error) {
          const code = errorCode(result.error);
          const message =
            code === ErrorCode.CLIENT_EPOCH_STALE
              ? 'Refused: another tab or client has control of this session.'
              : code === ErrorCode.RUN_ALREADY_ACTIVE
                ? 'Not sent: the agent is still on its current run. Send it again once the run ends, or cancel the run first.'
                : `Refused${code ? ` (${code})` : ''}: ${result.error.graphQLErrors[0]?.message ?? result.error.message}`;
          setState({ running: false, error: message });
          return false;
        }
        setState({ running: false, error: null });
        return true;
      } catch (error) {
        setState({ running: false, error: error instanceof Error ? error.message : String(error) });
        return false;
      }
    },
    [control, sessionId],
  );

  return { ...state, run, client };
}
