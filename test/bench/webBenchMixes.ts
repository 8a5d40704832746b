/**
 * The two live-stream mixes of `npm run bench:web` (issue 13), endless and deterministic like
 * serverBenchDrafts.ts's realistic runs, but each weighted to one kind of row:
 *  - 'log': runs of mostly STUDIO_LOG lines (one row each), a budget update every 25 lines and a
 *    stage change now and then: the cheapest rows, many of them;
 *  - 'tool': runs of back-to-back tool calls (TOOL_PROPOSED, TOOL_DISPATCHED, TOOL_SUCCEEDED, each
 *    embedding the call's current state, folded into one card per call) with a log line after
 *    every third call: the rows whose events change an existing row.
 * Every run ends with RUN_SUCCEEDED, so a finished run leaves a row of its own as the newest.
 */
import { createHash } from 'node:crypto';
import type { BudgetValue, EventDraft } from '../../server/engine/eventDrafts.ts';

export type StreamMix = 'log' | 'tool';

export const STREAM_MIXES: readonly StreamMix[] = ['log', 'tool'];

const digest = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

const LINES = [
  'resolved prefab reference crates/wooden_crate.prefab',
  'spawned 48 entities in dependency order',
  'cache miss for assets/level1.json, reading from disk',
  'physics step took 3.2 ms (budget 4 ms)',
  'skipping entity 812: prefab missing, path logged',
  'hot reload: src/loader.lua changed, 2 modules invalidated',
];

const FILES = ['src/main.lua', 'src/loader.lua', 'src/player.lua', 'src/ui/hud.lua'];

function budget(n: number): BudgetValue {
  return {
    dimensions: [
      {
        name: 'tokens',
        scope: 'session',
        limit: '2000000',
        reserved: '4000',
        consumed: String(n * 37),
        remaining: String(Math.max(0, 2_000_000 - n * 37)),
        unit: 'token',
      },
    ],
    resetAt: null,
    platformFunded: true,
    payer: 'PLATFORM',
  };
}

/** Yields drafts of one mix forever; `salt` keeps ids unique between sessions of one server. */
export function* mixDrafts(mix: StreamMix, salt: string): Generator<EventDraft> {
  let n = 0;
  for (let run = 1; ; run += 1) {
    const runId = `run_${salt}_${run}`;
    yield {
      type: 'USER_MESSAGE',
      runId,
      messageId: `msg_${salt}_u${run}`,
      role: 'USER',
      content: `Run ${run}: keep going with the level loader.`,
    };
    yield { type: 'RUN_STARTED', runId, status: 'RUNNING' };
    if (mix === 'log') {
      for (let i = 0; i < 400; i += 1) {
        n += 1;
        yield {
          type: 'STUDIO_LOG',
          runId,
          level: i % 17 === 0 ? 'warn' : 'info',
          message: `${LINES[n % LINES.length]!} [${n}]`,
          origin: i % 3 === 0 ? 'runtime' : 'agent',
        };
        if (i % 25 === 24) yield { type: 'BUDGET_UPDATED', runId, budget: budget(n) };
        if (i % 100 === 99)
          yield {
            type: 'STUDIO_STAGE_CHANGED',
            runId,
            fromStage: 'building',
            toStage: 'testing',
            detail: null,
          };
      }
    } else {
      for (let t = 0; t < 120; t += 1) {
        n += 1;
        const toolCallId = `tc_${salt}_${run}_${t}`;
        const path = FILES[n % FILES.length]!;
        const argumentsJson = JSON.stringify({ path });
        const base = {
          runId,
          toolCallId,
          toolName: 'workspace.file.read',
          toolVersion: '1.0.0',
        } as const;
        yield {
          ...base,
          type: 'TOOL_PROPOSED',
          status: 'PROPOSED',
          executor: 'SERVER',
          safeSummary: `Read ${path}`,
          argumentHash: digest(argumentsJson),
          argumentsJson,
        };
        yield { ...base, type: 'TOOL_DISPATCHED', status: 'RUNNING', executor: 'SERVER' };
        yield {
          ...base,
          type: 'TOOL_SUCCEEDED',
          status: 'SUCCEEDED',
          resultJson: JSON.stringify({ path, bytes: 1800 + n }),
        };
        if (t % 3 === 2)
          yield {
            type: 'STUDIO_LOG',
            runId,
            level: 'info',
            message: `read ${path} (${1800 + n} bytes)`,
            origin: 'agent',
          };
      }
    }
    yield { type: 'RUN_SUCCEEDED', runId, status: 'SUCCEEDED' };
  }
}
