/**
 * Every event the server stores can be read back through the contract with every field of its
 * union member selected: a null in a non-null field would fail the whole History page for every
 * client that selects it. The selection is generated from schema.graphql, so it covers new fields.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSchema, getNamedType, isLeafType, isObjectType, isUnionType } from 'graphql';
import type { GraphQLObjectType } from 'graphql';
import {
  APPROVE,
  CREATE_CHECKPOINT,
  REJECT,
  REQUEST_RESTORE,
  attach,
  createSession,
  decideInput,
  keepAlive,
  key,
  makeClient,
  ok,
  run,
  sendMessage,
  startHarness,
  waitForEvent,
  waitForRunEnd,
} from './harness.ts';
import type { ApprovalData, CheckpointData, Harness, StudioClient } from './harness.ts';
import { EVENT_TYPE_MEMBER, RUN_EVENT_STATUS } from '../../protocol/events.ts';

const schema = buildSchema(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'));

/** Every field of `type`, leaves as they are and objects expanded (two levels), aliased by member. */
function selectAll(type: GraphQLObjectType, prefix: string, depth = 0): string {
  return Object.values(type.getFields())
    .map((field) => {
      const named = getNamedType(field.type);
      const alias = `${prefix}_${field.name}: ${field.name}`;
      if (isLeafType(named)) return alias;
      if (isObjectType(named) && depth < 2)
        return `${alias} { ${selectAll(named, `${prefix}_${field.name}`, depth + 1)} }`;
      return '';
    })
    .filter(Boolean)
    .join(' ');
}

const union = schema.getType('CrowdyStudioAgentEvent');
if (!isUnionType(union)) throw new Error('CrowdyStudioAgentEvent is not a union');
const FULL_EVENT = union
  .getTypes()
  .map((member) => `... on ${member.name} { ${selectAll(member, member.name)} }`)
  .join('\n');

const FULL_HISTORY = `query FullHistory($sessionId: String!, $afterSeq: BigInt) {
  crowdyStudioAgentHistory(sessionId: $sessionId, afterSeq: $afterSeq, first: 200) {
    hasMore
    events { __typename ${FULL_EVENT} }
  }
}`;

type FullEvent = Record<string, unknown> & { __typename: string };

let h: Harness;
let c: StudioClient;

beforeAll(async () => {
  h = await startHarness();
  c = makeClient(h);
});

afterAll(async () => {
  await h.dispose();
});

/** Drives approve, reject and restore flows so that the log holds every kind of event the server writes. */
async function produceEveryKind(): Promise<void> {
  for (const decide of [APPROVE, REJECT]) {
    const session = await createSession(c, 'BUILD', 'cleanup-app');
    const a = await attach(c, session.sessionId);
    const stop = keepAlive(c, a);
    try {
      const { runId } = await sendMessage(c, a, 'Tidy up: delete the scratch file');
      const { event } = await waitForEvent(
        c,
        session.sessionId,
        (e) => e.type === 'APPROVAL_REQUESTED' && e.runId === runId,
        'the approval',
      );
      await ok(
        c,
        decide,
        decideInput(a, {
          toolCallId: event.approvalToolCallId!,
          argumentHash: event.argumentHash!,
        }),
      );
      await waitForRunEnd(c, session.sessionId, runId);
    } finally {
      stop();
    }
  }
  const session = await createSession(c, 'BUILD', 'sample-app');
  const a = await attach(c, session.sessionId);
  const stop = keepAlive(c, a);
  try {
    const cp = (
      await ok<{ studioCreateCheckpoint: CheckpointData }>(c, CREATE_CHECKPOINT, {
        input: {
          idempotencyKey: key('cp'),
          sessionId: session.sessionId,
          clientEpoch: a.clientEpoch,
        },
      })
    ).studioCreateCheckpoint;
    const { runId } = await sendMessage(c, a, 'Note the restore test in the changelog');
    await waitForRunEnd(c, session.sessionId, runId);
    const project = (await h.server.engine.projectOfSession(session.sessionId))!;
    const approval = (
      await ok<{ studioRequestCheckpointRestore: ApprovalData }>(c, REQUEST_RESTORE, {
        input: {
          idempotencyKey: key('restore'),
          sessionId: session.sessionId,
          clientEpoch: a.clientEpoch,
          checkpointId: cp.checkpointId,
          checkpointContentHash: cp.contentHash,
          expectedRevision: project.revision,
        },
      })
    ).studioRequestCheckpointRestore;
    await ok(c, APPROVE, decideInput(a, approval));
    await waitForEvent(
      c,
      session.sessionId,
      (e) => e.type === 'TOOL_SUCCEEDED' && e.toolCallId === approval.toolCallId,
      'the restore',
    );
  } finally {
    stop();
  }
}

describe('event shapes', () => {
  it('serves every stored event with every field of its union member, including AgentRunEvent.status', async () => {
    await produceEveryKind();
    const seenTypes = new Set<string>();
    const failures: string[] = [];
    for (const session of await h.server.engine.reads.listAllSessions()) {
      let afterSeq = '0';
      for (;;) {
        const result = await run<{
          crowdyStudioAgentHistory: { hasMore: boolean; events: FullEvent[] };
        }>(c, FULL_HISTORY, {
          sessionId: session.sessionId,
          afterSeq,
        });
        if (result.error) {
          const first = result.error.graphQLErrors[0];
          failures.push(
            `${session.sessionId} after ${afterSeq}: ${first?.message} at ${JSON.stringify(first?.path)}`,
          );
          break;
        }
        const page = result.data!.crowdyStudioAgentHistory;
        for (const event of page.events) {
          const type = event[`${event.__typename}_type`] as keyof typeof EVENT_TYPE_MEMBER;
          seenTypes.add(type);
          expect(EVENT_TYPE_MEMBER[type]).toBe(event.__typename);
          if (event.__typename === 'AgentRunEvent')
            expect(event.AgentRunEvent_status, type).toBe(
              RUN_EVENT_STATUS[type as keyof typeof RUN_EVENT_STATUS],
            );
        }
        if (!page.hasMore || page.events.length === 0) break;
        afterSeq = page.events[page.events.length - 1]![
          `${page.events[page.events.length - 1]!.__typename}_seq`
        ] as string;
      }
    }
    expect(failures).toEqual([]);
    // The flows above wrote these kinds; each one was read back.
    for (const type of [
      'RUN_STARTED',
      'RUN_SUCCEEDED',
      'RUN_FAILED',
      'TOOL_PROPOSED',
      'TOOL_DENIED',
      'APPROVAL_GRANTED',
      'APPROVAL_DENIED',
      'APPROVAL_CONSUMED',
      'CHECKPOINT_CREATED',
      'CHECKPOINT_RESTORED',
      'LEASE_GRANTED',
      'BUDGET_UPDATED',
      'ASSISTANT_CHUNK',
      'STUDIO_LOG',
      'STUDIO_STAGE_CHANGED',
    ])
      expect(seenTypes.has(type), type).toBe(true);
  });
});
