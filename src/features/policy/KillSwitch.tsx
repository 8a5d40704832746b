import { useEffect } from 'react';
import { useMutation, useQuery } from 'urql';
import { LOCAL_APP_ID } from '../../../protocol/contract.ts';
import { errorCode, makeIdempotencyKey } from '../../graphql/attachment.ts';
import { graphql } from '../../graphql/graphql.ts';
import { useState } from 'react';
import { SafeText } from '../../ui/SafeText.tsx';

const PolicyFields = graphql(`
  fragment AgentPolicyFields on CrowdyStudioAgentPolicy @_unmask {
    kind
    appId
    enabled
    killSwitch
    disableReasonCode
    revision
    updatedAt
    studioUpdatedBy
  }
`);

export const AgentPolicyQuery = graphql(
  `
    query AgentPolicy($appId: BigInt!) {
      crowdyStudioAgentPolicy(appId: $appId) {
        ...AgentPolicyFields
      }
    }
  `,
  [PolicyFields],
);

export const SetAgentPolicyMutation = graphql(
  `
    mutation SetAgentPolicy($input: SetCrowdyStudioAgentAppPolicyInput!) {
      setCrowdyStudioAgentPolicy(input: $input) {
        ...AgentPolicyFields
      }
    }
  `,
  [PolicyFields],
);

/** How often another tab's kill switch is noticed (the policy has no subscription). */
const POLL_MS = 5000;

/**
 * The header's kill switch (the contract's setCrowdyStudioAgentPolicy with killSwitch and
 * expectedRevision): one press stops every agent at once (runs cancelled, approvals revoked, new
 * runs refused with AGENT_DISABLED) until it is turned off again. A stale revision (someone else
 * changed the policy) is refused by the server and shown.
 */
export function KillSwitch() {
  const [{ data, error }, refetch] = useQuery({
    query: AgentPolicyQuery,
    variables: { appId: LOCAL_APP_ID },
  });
  useEffect(() => {
    const timer = setInterval(() => refetch({ requestPolicy: 'network-only' }), POLL_MS);
    return () => clearInterval(timer);
  }, [refetch]);
  const [{ fetching }, setPolicy] = useMutation(SetAgentPolicyMutation);
  const [problem, setProblem] = useState<string | null>(null);
  const policy = data?.crowdyStudioAgentPolicy;
  if (!policy) return error ? <span className="text-xs">Kill switch unavailable</span> : null;
  const on = policy.killSwitch;
  const toggle = async () => {
    setProblem(null);
    const result = await setPolicy({
      input: {
        idempotencyKey: makeIdempotencyKey('killSwitch'),
        appId: LOCAL_APP_ID,
        expectedRevision: policy.revision,
        killSwitch: !on,
      },
    });
    if (result.error) {
      setProblem(
        `${errorCode(result.error) ?? 'Refused'}: ${result.error.graphQLErrors[0]?.message ?? result.error.message}`,
      );
      refetch({ requestPolicy: 'network-only' });
    }
  };
  return (
    <div className="flex items-center gap-2">
      {on ? (
        <span
          role="status"
          className="text-xs font-semibold text-red-800 max-md:sr-only dark:text-red-300"
        >
          Every agent is stopped
          {policy.studioUpdatedBy ? (
            <>
              {' '}
              (by <SafeText text={policy.studioUpdatedBy} />)
            </>
          ) : null}
        </span>
      ) : null}
      <button
        type="button"
        aria-pressed={on}
        disabled={fetching}
        onClick={() => void toggle()}
        className={`shrink-0 rounded px-2 py-1 text-sm font-semibold whitespace-nowrap focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 disabled:opacity-50 ${on ? 'border border-red-700 text-red-800 dark:text-red-200' : 'bg-red-700 text-white hover:bg-red-800'}`}
      >
        {/* On a phone or a zoomed window the header has one line: the short words, which are
            also the whole accessible name there (hidden words are not part of it). */}
        {on ? (
          <>
            <span className="md:hidden">Resume agents</span>
            <span className="max-md:hidden">Let agents run again</span>
          </>
        ) : (
          <>
            Stop<span className="max-md:hidden"> all agents</span>
          </>
        )}
      </button>
      {problem ? (
        <span role="alert" className="text-xs text-red-800 dark:text-red-300">
          <SafeText text={problem} />
        </span>
      ) : null}
    </div>
  );
}
