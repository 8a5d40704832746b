import { describe, expect, it } from 'vitest';
import {
  approval,
  approvalEvent,
  firstSeqOf,
  lastSeqOf,
  logEvents,
  messageEvent,
  questionEvent,
  toolCall,
  toolEvent,
} from '../../test/fixtures.ts';
import { buildRows, type EventRow, type MessageRow, type ToolCallRow } from './buildRows.ts';

/** The first seq of page 1 and of page 2. */
const P1 = firstSeqOf(1);
const P2 = firstSeqOf(2);

describe('buildRows', () => {
  it('merges assistant chunks across pages into one message, final once ASSISTANT_MESSAGE lands', () => {
    const streaming = buildRows([
      {
        page: '0',
        events: [
          messageEvent(1, 'USER_MESSAGE', 'hi'),
          messageEvent(2, 'ASSISTANT_CHUNK', 'Hel', 'a'),
        ],
        loading: false,
        error: null,
      },
      {
        page: '1',
        events: [messageEvent(P1, 'ASSISTANT_CHUNK', 'lo', 'a')],
        loading: false,
        error: null,
      },
    ]);
    expect(streaming).toHaveLength(2);
    const bubble = streaming[1] as MessageRow;
    expect(bubble).toMatchObject({
      kind: 'message',
      content: 'Hello',
      final: false,
      seqs: ['2', String(P1)],
    });

    const done = buildRows([
      {
        page: '0',
        events: [
          messageEvent(2, 'ASSISTANT_CHUNK', 'Hel', 'a'),
          messageEvent(3, 'ASSISTANT_MESSAGE', 'Hello.', 'a'),
          messageEvent(4, 'ASSISTANT_CHUNK', 'late', 'a'),
        ],
        loading: false,
        error: null,
      },
    ]);
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ content: 'Hello.', final: true, key: 'message:a' });
    expect(done[0]?.version).not.toBe(bubble.version);
  });

  it('folds every event of a tool call, approvals included, into one row at its first loaded event', () => {
    const waiting = toolCall({ status: 'WAITING_FOR_APPROVAL', approval: approval() });
    const done = toolCall({ status: 'SUCCEEDED', approval: approval({ status: 'CONSUMED' }) });
    const rows = buildRows([
      {
        page: '0',
        events: [
          toolEvent(1, 'TOOL_PROPOSED', waiting),
          approvalEvent(2, 'APPROVAL_REQUESTED', waiting, approval()),
          ...logEvents(3, 3),
        ],
        loading: false,
        error: null,
      },
      { page: '1', events: [toolEvent(P1, 'TOOL_SUCCEEDED', done)], loading: false, error: null },
    ]);
    expect(rows.map((row) => row.kind)).toEqual(['toolCall', 'event']);
    const card = rows[0] as ToolCallRow;
    expect(card).toMatchObject({
      key: 'tool:call-1',
      seqs: ['1', '2', String(P1)],
      status: 'SUCCEEDED',
      toolName: 'workspace.file.patch',
    });
    expect(card.toolCall?.approval?.status).toBe('CONSUMED');
  });

  it('folds a question and its answer into one row (one card per question)', () => {
    const asked = questionEvent(3);
    const answered = {
      ...questionEvent(9),
      type: 'STUDIO_QUESTION_ANSWERED',
      question: {
        ...asked.question,
        status: 'ANSWERED',
        answerChoiceIndex: 1,
        answeredAt: asked.createdAt,
      },
    } as typeof asked;
    const before = buildRows([{ page: '0', events: [asked], loading: false, error: null }]);
    const rows = buildRows([{ page: '0', events: [asked, answered], loading: false, error: null }]);
    expect(rows).toHaveLength(1);
    const row = rows[0] as EventRow;
    expect(row.kind).toBe('event');
    expect(row.seqs).toEqual(['3', '9']);
    // The row re-renders when the answer lands.
    expect(row.version).not.toBe((before[0] as EventRow).version);
  });

  it('keeps one gap row per page that is not loaded, in seq order', () => {
    const rows = buildRows([
      { page: '0', events: null, loading: false, error: null },
      { page: '1', events: null, loading: true, error: null },
      { page: '2', events: logEvents(P2, P2 + 1), loading: false, error: null },
    ]);
    expect(rows.map((row) => row.key)).toEqual([
      'page:0',
      'page:1',
      `session-1-e${P2}`,
      `session-1-e${P2 + 1}`,
    ]);
    expect(rows[1]).toMatchObject({
      kind: 'gap',
      fromSeq: String(P1),
      throughSeq: String(lastSeqOf(1)),
      loading: true,
    });
  });
});
