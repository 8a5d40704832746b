/**
 * Builds the bridge sources named on the command line. Secrets come only from the environment
 * (ANTHROPIC_API_KEY, LEVIATH_TOKEN), never from flags, so they stay out of shell history and `ps`.
 */
import { basename, resolve } from 'node:path';
import type { Engine } from '../engine/Engine.ts';
import type { Source } from './Source.ts';
import { ManagedAgentsSource } from './managed-agents/ManagedAgentsSource.ts';
import { LeviathSource } from './leviath/LeviathSource.ts';
import { createHash } from 'node:crypto';
import { ClaudeCodeSource, type ClaudeCodeProject } from './claude-code/ClaudeCodeSource.ts';

/** A source that needs the engine to be built (to register a project folder, say). */
export type SourceFactory = (engine: Engine) => Source | Promise<Source>;

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
  const claudeCode = values['claude-code'];
  if (typeof claudeCode === 'string') {
    const dirs = claudeCode
      .split(',')
      .map((d) => d.trim())
      .filter(Boolean)
      .map((d) => resolve(d));
    if (dirs.length === 0) throw new Error('--claude-code needs at least one folder');
    const apiKey = env.ANTHROPIC_API_KEY;
    if (!apiKey) throw new Error('--claude-code needs ANTHROPIC_API_KEY in the environment');
    factories.push((engine) =>
      makeClaudeCodeSource(engine, {
        dirs,
        apiKey,
        ...(env.ANTHROPIC_BASE_URL ? { baseUrl: env.ANTHROPIC_BASE_URL } : {}),
        ...(env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC
          ? {
              env: {
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC:
                  env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC,
              },
            }
          : {}),
      }),
    );
  }
  return factories;
}

/** The stable projectId of a --claude-code folder (from its absolute path). */
export function claudeCodeProjectId(dir: string): string {
  return `cc-${createHash('sha256').update(resolve(dir)).digest('hex').slice(0, 16)}`;
}

/**
 * A Claude Code source whose folders are studio projects, checkpointed by the workspace: an exact
 * pre-image before every allow of a tool that can write, and a checkpoint after each tool result.
 */
export async function makeClaudeCodeSource(
  engine: Engine,
  options: {
    dirs: string[];
    apiKey: string;
    baseUrl?: string;
    home?: string;
    env?: Record<string, string>;
    approvalTtlMs?: number;
  },
): Promise<ClaudeCodeSource> {
  const projects: ClaudeCodeProject[] = options.dirs.map((root) => ({
    projectId: claudeCodeProjectId(root),
    name: basename(root),
    root,
  }));
  for (const project of projects) {
    await engine.registerProject(project);
    engine.assignProjectSource(project.projectId, 'claude-code');
  }
  return new ClaudeCodeSource({
    projects,
    apiKey: options.apiKey,
    ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
    ...(options.home ? { home: options.home } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.approvalTtlMs ? { approvalTtlMs: options.approvalTtlMs } : {}),
    hooks: {
      beforeAllow: async (ctx) => {
        await engine.checkpoint(ctx.sessionId, 'AGENT_WRITE', {
          runId: ctx.runId,
          exactPreImage: true,
        });
      },
      afterToolResult: async (ctx) => {
        await engine.checkpoint(ctx.sessionId, 'STUDIO_AFTER_TOOL', { runId: ctx.runId });
      },
    },
  });
}

/**
 * A Leviath bridge; with a workspace folder, the folder becomes a studio project that is
 * checkpointed before every approval answer (an exact pre-image) and after every finished tool
 * call, and can be restored through the usual approval.
 */
export async function makeLeviathSource(
  engine: Engine,
  options: { url: string; token: string; workspaceDir?: string | undefined },
): Promise<LeviathSource> {
  const source = new LeviathSource({
    url: options.url,
    token: options.token,
    ...(options.workspaceDir ? { workspaceDir: options.workspaceDir } : {}),
  });
  if (options.workspaceDir) {
    await engine.registerProject({
      projectId: LEVIATH_PROJECT_ID,
      name: basename(options.workspaceDir),
      root: options.workspaceDir,
    });
    source.configureWorkspace({
      projectIdFor: () => LEVIATH_PROJECT_ID,
      hooks: {
        beforeDecision: async (ctx) => {
          await engine.checkpoint(ctx.sessionId, 'AGENT_WRITE', {
            runId: ctx.runId,
            exactPreImage: true,
          });
        },
        afterToolFinished: async (ctx) => {
          await engine.checkpoint(ctx.sessionId, 'STUDIO_AFTER_TOOL', { runId: ctx.runId });
        },
      },
    });
  }
  return source;
}
