/**
 * The burst's run and frames (log lines, tool calls, token counts: each one studio event), shared
 * by the fake gateway's process (leviathBurstPeer.ts) and the studio side (leviathBurst.ts).
 */
import type { FakeRun } from '../fakes/FakeLeviathPeer.ts';

export const BURST_TOKEN = 'lev-burst-token-0123456789';
export const BURST_RUN_ID = 'coder-1786409275-burst001';

export const BURST_RUN: FakeRun = {
  run_id: BURST_RUN_ID,
  agent_name: 'coder',
  task: 'Burst',
  model: 'claude-sonnet-4-6',
  status: 'running',
  current_stage: 'implement',
  iteration: 1,
  tool_calls: 0,
  workdir: null,
  title: 'Burst',
};

export function burstFrames(count: number): Record<string, unknown>[] {
  const base = { agent_id: BURST_RUN_ID, run_id: BURST_RUN_ID };
  const frames: Record<string, unknown>[] = [];
  for (let i = 0; frames.length < count; i += 1) {
    const callId = `toolu_burst_${i}`;
    frames.push({ ...base, type: 'log', line: `Step ${i}: reading the next file` });
    if (frames.length < count)
      frames.push({ ...base, type: 'tool_call_started', call_id: callId, tool: 'read_file' });
    if (frames.length < count)
      frames.push({
        ...base,
        type: 'tool_call_finished',
        call_id: callId,
        tool: 'read_file',
        ok: true,
        summary: `src/file_${i}.rs: 120 lines`,
      });
    if (frames.length < count)
      frames.push({
        ...base,
        type: 'tokens',
        prompt_tokens: 1000 + i,
        completion_tokens: 100 + i,
        cached_tokens: 0,
        cache_write_tokens: 0,
      });
  }
  return frames;
}
