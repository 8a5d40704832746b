/**
 * Seeds an empty data dir with demo sessions so a newcomer sees real activity at once:
 * - "changelog" (BUILD, sample-app): two finished runs and a MANUAL checkpoint (3 checkpoints);
 * - "cleanup" (BUILD, cleanup-app): a run waiting on a pending approval to delete a file;
 * - "question" (ASK, sample-app): a read-only answer;
 * - "live" (ASK, sample-app): a session the demo agent keeps working in, every few seconds.
 * A data dir that already has sessions is left as it is; only the live ticker restarts.
 */
import type { Engine } from '../../engine/Engine.ts';
import type { DemoAgent } from './DemoAgent.ts';
import { LOCAL_APP_ID } from '../../../protocol/contract.ts';

const LIVE_KEY = 'demo.liveSessionId';
const LIVE_MESSAGES = [
  'Check the build status and summarize it',
  'What changed in the project recently?',
  'Explain what greet() does with the shout option',
];

export async function seedDemo(
  engine: Engine,
  demo: DemoAgent,
  options: { tickMs?: number } = {},
): Promise<void> {
  const tickMs = options.tickMs ?? 8_000;
  const existingLive = await engine.setting(LIVE_KEY);
  if ((await engine.reads.listAllSessions()).length > 0) {
    if (existingLive) demo.startTicker(existingLive, tickMs, LIVE_MESSAGES);
    return;
  }
  const run = async (sessionId: string, content: string) => {
    const runId = await demo.startRun(
      engine.sessionInfo(await engine.requireSession(sessionId)),
      content,
      {
        stepMs: 0,
      },
    );
    await demo.settled(runId);
  };

  const changelog = await engine.createSession({
    appId: LOCAL_APP_ID,
    projectId: 'sample-app',
    mode: 'BUILD',
  });
  await run(changelog.sessionId, 'Note the new shout option in the changelog');
  await run(changelog.sessionId, 'Record that greet() now trims names');
  await engine.checkpoint(changelog.sessionId, 'MANUAL');

  const question = await engine.createSession({
    appId: LOCAL_APP_ID,
    projectId: 'sample-app',
    mode: 'ASK',
  });
  await run(question.sessionId, 'What does this project do?');

  const live = await engine.createSession({
    appId: LOCAL_APP_ID,
    projectId: 'sample-app',
    mode: 'ASK',
  });
  await run(live.sessionId, LIVE_MESSAGES[0]!);
  await engine.setSetting(LIVE_KEY, live.sessionId);
  demo.startTicker(live.sessionId, tickMs, LIVE_MESSAGES);

  // Last, so it is the newest session and its approval has the whole TTL left.
  const cleanup = await engine.createSession({
    appId: LOCAL_APP_ID,
    projectId: 'cleanup-app',
    mode: 'BUILD',
  });
  await run(cleanup.sessionId, 'Update the changelog, then clean up the scratch file');
}
