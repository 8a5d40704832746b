import { useCallback, useState } from 'react';
import { useMutation } from 'urql';
import { errorCode, makeIdempotencyKey, useSessionControl } from '../../graphql/attachment.ts';
import { graphql } from '../../graphql/graphql.ts';

export const AskAgainMutation = graphql(`
  mutation AskAgain($input: StudioAskAgainInput!) {
    studioAskAgain(input: $input) {
      approvalId
      toolCallId
      status
    }
  }
`);

/** "Ask again": the source proposes an expired or revoked call anew (attaching first if needed). */
export function useAskAgain(sessionId: string, toolCallId: string) {
  const control = useSessionControl(sessionId);
  const [, ask] = useMutation(AskAgainMutation);
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const askAgain = useCallback(async () => {
    setSending(true);
    setError(null);
    try {
      const clientEpoch = await control.ensureAttached();
      const result = await ask({
        input: {
          idempotencyKey: makeIdempotencyKey('askAgain'),
          sessionId,
          clientEpoch,
          toolCallId,
        },
      });
      if (result.error)
        setError(
          `${errorCode(result.error) ?? 'Refused'}: ${result.error.graphQLErrors[0]?.message ?? result.error.message}`,
        );
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setSending(false);
    }
  }, [ask, control, sessionId, toolCallId]);
  return { askAgain, sending, error };
}
