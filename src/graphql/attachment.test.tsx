import { act, render, screen, waitFor } from '@testing-library/react';
import { Provider } from 'urql';
import { afterEach, describe, expect, it } from 'vitest';
import type { Operation } from '@urql/core';
import {
  attachmentStoreFor,
  errorCode,
  makeIdempotencyKey,
  useSessionControl,
} from './attachment.ts';
import { EventBatchesSubscription } from './eventDocuments.ts';
import { makeTestClient } from '../test/testClient.ts';
import { lifecycleEvent, SESSION_ID } from '../test/fixtures.ts';

function Probe({ label }: { label: string }) {
  const control = useSessionControl(SESSION_ID);
  return (
    <div>
      <p data-testid={`${label}-state`}>{control.state}</p>
      <p data-testid={`${label}-epoch`}>{control.clientEpoch ?? 'none'}</p>
      <p data-testid={`${label}-error`}>{control.error ?? ''}</p>
      <button
        onClick={() => void control.ensureAttached().catch(() => undefined)}
      >{`${label} act`}</button>
      <button onClick={() => void control.takeControl()}>{`${label} take control`}</button>
      <button onClick={() => control.release()}>{`${label} release`}</button>
    </div>
  );
}

const stores: { dispose(): void }[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.dispose();
});

function inputOf(operation: Operation): Record<string, unknown> {
  return (operation.variables as { input: Record<string, unknown> }).input;
}

function setup(options: { heartbeatStale?: () => boolean } = {}) {
  let epoch = 0;
  const test = makeTestClient((operation) => {
    const name = operation.query.definitions.find((d) => d.kind === 'OperationDefinition')?.name
      ?.value;
    if (name === 'StudioAttachClient') {
      epoch += 1;
      return {
        data: {
          crowdyStudioAgentAttachClient: {
            __typename: 'AgentClientAttachment',
            clientEpoch: String(epoch),
            replayAfterSeq: '0',
            session: {
              __typename: 'AgentSession',
              sessionId: SESSION_ID,
              currentClientEpoch: String(epoch),
              clientEpoch: String(epoch),
            },
          },
        },
      };
    }
    if (name === 'StudioHeartbeat') {
      if (options.heartbeatStale?.()) {
        return {
          data: null,
          errors: [{ message: 'stale', extensions: { code: 'AGENT_CLIENT_EPOCH_STALE' } }],
        };
      }
      return {
        data: {
          crowdyStudioAgentHeartbeat: {
            __typename: 'AgentHeartbeat',
            serverTime: new Date().toISOString(),
            workspaceLeaseExpiresAt: null,
          },
        },
      };
    }
    if (name === 'StudioSessionEpoch') {
      return {
        data: {
          crowdyStudioAgentSession: {
            __typename: 'AgentSession',
            sessionId: SESSION_ID,
            currentClientEpoch: String(epoch),
          },
        },
      };
    }
    return { data: null };
  });
  stores.push(attachmentStoreFor(test.client, { heartbeatMs: 20 }));
  const named = (name: string) =>
    test.operations.filter((op) =>
      op.query.definitions.some((d) => d.kind === 'OperationDefinition' && d.name?.value === name),
    );
  render(
    <Provider value={test.client}>
      <Probe label="card" />
      <Probe label="header" />
    </Provider>,
  );
  return { test, named };
}

describe('useSessionControl', () => {
  it('attaches once for every component of the session and heartbeats with the epoch', async () => {
    const { named } = setup();
    expect(screen.getByTestId('card-state').textContent).toBe('observer');
    act(() => {
      screen.getByText('card act').click();
      screen.getByText('header act').click();
    });
    await waitFor(() => expect(screen.getByTestId('header-state').textContent).toBe('attached'));
    expect(screen.getByTestId('card-epoch').textContent).toBe('1');
    expect(named('StudioAttachClient')).toHaveLength(1);
    const attach = inputOf(named('StudioAttachClient')[0] as Operation);
    expect(attach.clientInstanceId).toBe(sessionStorage.getItem('agent-studio:client-instance-id'));
    expect(String(attach.idempotencyKey)).toMatch(/^studio:attach:/);
    await waitFor(() => expect(named('StudioHeartbeat').length).toBeGreaterThanOrEqual(2));
    expect(inputOf(named('StudioHeartbeat')[0] as Operation).clientEpoch).toBe('1');
  });

  it('moves to fenced when a heartbeat is refused as stale, and takeControl attaches again', async () => {
    let stale = false;
    const { named } = setup({ heartbeatStale: () => stale });
    act(() => screen.getByText('card act').click());
    await waitFor(() => expect(screen.getByTestId('card-state').textContent).toBe('attached'));
    stale = true;
    await waitFor(() => expect(screen.getByTestId('card-state').textContent).toBe('fenced'));
    expect(screen.getByTestId('header-error').textContent).toMatch(
      /Another tab or client took control/,
    );
    // Acting while fenced does not silently re-attach.
    act(() => screen.getByText('card act').click());
    expect(named('StudioAttachClient')).toHaveLength(1);
    stale = false;
    act(() => screen.getByText('header take control').click());
    await waitFor(() => expect(screen.getByTestId('card-state').textContent).toBe('attached'));
    expect(screen.getByTestId('card-epoch').textContent).toBe('2');
  });

  it('moves to fenced when the stream shows a newer CLIENT_ATTACHED epoch', async () => {
    const { test } = setup();
    act(() => screen.getByText('card act').click());
    await waitFor(() => expect(screen.getByTestId('card-state').textContent).toBe('attached'));
    test.client
      .subscription(EventBatchesSubscription, { sessionId: SESSION_ID, afterSeq: '0' })
      .subscribe(() => undefined);
    act(() => {
      test.push('studioAgentEventBatches', {
        studioAgentEventBatches: {
          __typename: 'StudioAgentEventBatch',
          sessionId: SESSION_ID,
          fromSeq: '1',
          throughSeq: '1',
          events: [lifecycleEvent(1, 'CLIENT_ATTACHED', { lifecycleClientEpoch: '7' })],
        },
      });
    });
    await waitFor(() => expect(screen.getByTestId('card-state').textContent).toBe('fenced'));
  });

  it('goes back to observing on release', async () => {
    const { named } = setup();
    act(() => screen.getByText('card act').click());
    await waitFor(() => expect(screen.getByTestId('card-state').textContent).toBe('attached'));
    act(() => screen.getByText('header release').click());
    expect(screen.getByTestId('card-state').textContent).toBe('observer');
    const beats = named('StudioHeartbeat').length;
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(named('StudioHeartbeat').length).toBe(beats);
  });
});

describe('makeIdempotencyKey and errorCode', () => {
  it('makes distinct studio keys and reads extensions.code', () => {
    const a = makeIdempotencyKey('approve');
    expect(a).toMatch(/^studio:approve:[0-9a-f-]{32,36}$/);
    expect(makeIdempotencyKey('approve')).not.toBe(a);
    expect(errorCode(undefined)).toBeNull();
  });
});
