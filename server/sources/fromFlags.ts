/**
 * Builds the bridge sources named on the command line. Secrets come only from the environment
 * (ANTHROPIC_API_KEY, LEVIATH_TOKEN), never from flags, so they stay out of shell history and `ps`.
 */
import { basename, resolve } from 'node:path';
import type { Engine } from '../engine/Engine.ts';
import type { Source } from './Source.ts';
import { ManagedAgentsSource } from './managed-agents/ManagedAgentsSource.ts';
import { LeviathSource } from './leviath/LeviathSource.ts';

/** A source that needs the engine to be built (to register a project folder, say). */
export type SourceFactory = (engine: Engine) => Source;

export const DEFAULT_MANAGED_AGENTS_URL = 'https://api.anthropic.com';
/** The studio project that stands for the folder given with --leviath-workspace. */
export const LEVIATH_PROJECT_ID = 'leviath-workspace';

export function makeSourcesFromFlags(
  values: Record<string, string | boolean | undefined>,
  env: NodeJS.ProcessEnv,
): SourceFactory[] {
  const factories: SourceFactory[] = [];
  const managed = values['managed-agents'];
  if (typeof managed === 'string') {
    const sessionIds = managed
      .split(',')
      .map((id) => id.trim())
      .filter(Boolean);
    if (sessionIds.length === 0) throw new Error('--managed-agents needs at least one session id');
    const apiKey = env.ANTHROPIC_API_KEY;
    if (!apiKey) throw new Error('--managed-agents needs ANTHROPIC_API_KEY in the environment');
    const baseUrl =
      typeof values['managed-agents-url'] === 'string'
        ? values['managed-agents-url']
        : DEFAULT_MANAGED_AGENTS_URL;
    factories.push(() => new ManagedAgentsSource({ sessionIds, apiKey, baseUrl }));
  }
  const leviath = values.leviath;
  if (typeof leviath === 'string') {
    const token = env.LEVIATH_TOKEN;
    if (!token) throw new Error('--leviath needs LEVIATH_TOKEN in the environment');
    const workspace = values['leviath-workspace'];
    const workspaceDir = typeof workspace === 'string' ? resolve(workspace) : undefined;
    factories.push((engine) => makeLeviathSource(engine, { url: leviath, token, workspaceDir }));
  } else if (values['leviath-workspace']) {
    throw new Error('--leviath-workspace needs --leviath URL');
  }
  return factories;
}

/**
 * A Leviath bridge; with a workspace folder, the folder becomes a studio project that is
 * checkpointed before every approval answer (an exact pre-image) and after every finished tool
 * call, and can be restored through the usual approval.
 */
export function makeLeviathSource(
  engine: Engine,
  options: { url: string; token: string; workspaceDir?: string | undefined },
): LeviathSource {
  const source = new LeviathSource({
    url: options.url,
    token: options.token,
    ...(options.workspaceDir ? { workspaceDir: options.workspaceDir } : {}),
  });
  if (options.workspaceDir) {
    engine.registerProject({
      projectId: LEVIATH_PROJECT_ID,
      name: basename(options.workspaceDir),
      root: options.workspaceDir,
    });
    source.configureWorkspace({
      projectIdFor: () => LEVIATH_PROJECT_ID,
      hooks: {
        beforeDecision: async (ctx) => {
          engine.checkpoint(ctx.sessionId, 'AGENT_WRITE', {
            runId: ctx.runId,
            exactPreImage: true,
          });
        },
        afterToolFinished: async (ctx) => {
          engine.checkpoint(ctx.sessionId, 'STUDIO_AFTER_TOOL', { runId: ctx.runId });
        },
      },
    });
  }
  return source;
}
