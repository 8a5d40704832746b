/**
 * Starts both fake peers from the fixtures, for trying the bridges by hand or from a journey:
 *
 *   npx tsx test/fakes/serveFakePeers.ts
 *
 * prints the URLs and the environment to start the studio against them, then, every few
 * seconds, lets each runtime ask for something new so there is always an approval to decide.
 */
import { readFileSync } from 'node:fs';
import { FakeManagedAgentsPeer, type FakeEvent } from './FakeManagedAgentsPeer.ts';
import { FakeLeviathPeer, type FakeInteraction, type FakeRun } from './FakeLeviathPeer.ts';

const API_KEY = process.env.ANTHROPIC_API_KEY ?? 'sk-ant-fake-local-key';
const TOKEN = process.env.LEVIATH_TOKEN ?? 'lev-fake-local-token';

function json<T>(path: string): T {
  return JSON.parse(readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8')) as T;
}

const live = json<{
  session: Record<string, unknown>;
  history: FakeEvent[];
  live: FakeEvent[];
  afterAllow: FakeEvent[];
}>('managed-agents/live-approval.json');
const sessionId = String(live.session.id);
const ma = await FakeManagedAgentsPeer.start({
  apiKey: API_KEY,
  sessions: { [sessionId]: { session: live.session, history: [...live.history, ...live.live] } },
});
ma.onEventsSent = (id, sent) => {
  if (sent.some((e) => e.type === 'user.tool_confirmation' && e.result === 'allow'))
    setTimeout(() => ma.emit(id, live.afterAllow), 500);
};

const state = json<{
  config: Record<string, unknown>;
  runs: FakeRun[];
  interactions: Record<string, FakeInteraction>;
}>('leviath/state-at-connect.json');
const lev = await FakeLeviathPeer.start({
  token: TOKEN,
  config: state.config,
  runs: state.runs,
  interactions: state.interactions,
});

process.stdout.write(
  [
    `Managed Agents fake: ${ma.url} (session ${sessionId})`,
    `Leviath fake:        ${lev.url}`,
    '',
    `ANTHROPIC_API_KEY=${API_KEY} LEVIATH_TOKEN=${TOKEN} npm start -- --no-demo \\`,
    `  --managed-agents ${sessionId} --managed-agents-url ${ma.url} --leviath ${lev.url}`,
    '',
  ].join('\n'),
);

let n = 0;
const timer = setInterval(() => {
  n += 1;
  const runId = 'coder-1786409275-d17e8f82';
  const request: FakeInteraction = {
    id: `approve-toolu_demo${n}`,
    kind: 'tool_approval',
    prompt: `Allow tool call: \`bash\` - \`cargo test --test t${n}\`?`,
    options: ['Allow once', 'Allow cargo for this stage', 'Allow cargo for this run', 'Deny'],
    tool_name: 'bash',
    tool_arguments: { command: `cargo test --test t${n}` },
    required: true,
    stage_name: 'implement',
    body: null,
    body_format: 'plain',
  };
  lev.openInteraction(runId, request);
  lev.send({ type: 'interaction_needed', agent_id: runId, run_id: runId, request });
}, 30_000);

const stop = () => {
  clearInterval(timer);
  void Promise.all([ma.close(), lev.close()]).then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
