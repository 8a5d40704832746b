/**
 * The studio's tool descriptors (crowdy.agent-tool/1). Digests follow the contract's recipe:
 * descriptorDigest = sha256 of the RFC 8785 canonical descriptor JSON; registryDigest = sha256 of
 * {"contract":"crowdy.agent-tools/1","descriptors":[{descriptor, descriptorDigest}...]} sorted by
 * name@version.
 */
import { canonicalJson } from '../workspace/canonicalJson.ts';
import { sha256Digest } from '../workspace/manifest.ts';
import type { AgentMode, ToolExecutor, ToolRisk } from '../../protocol/events.ts';

export interface ToolDescriptor {
  schemaVersion: string;
  name: string;
  wireName: string;
  version: string;
  summary: string;
  executor: ToolExecutor;
  modes: AgentMode[];
  risk: ToolRisk;
  riskEffects: string[];
  riskReversible: boolean;
  scopes: string[];
  scopeRequirementsJson: string;
  approvalRequired: boolean;
  approvalPolicy: 'NONE' | 'REQUIRED' | 'CONDITIONAL';
  approvalReasons: string[];
  approvalMaxTtlSeconds: number;
  idempotencyClass: string;
  idempotencyKeyScope: string;
  timeoutMs: number;
  inputSchemaJson: string;
  outputSchemaJson: string;
  inputRedactionJson: string;
  outputRedactionJson: string;
  maxPersistedBytes: number;
  descriptorJson: string;
  descriptorDigest: string;
}

type Spec = Pick<
  ToolDescriptor,
  | 'name'
  | 'summary'
  | 'modes'
  | 'risk'
  | 'riskEffects'
  | 'riskReversible'
  | 'scopes'
  | 'approvalPolicy'
  | 'approvalReasons'
> & {
  input: object;
  output: object;
  idempotencyClass?: string;
  idempotencyKeyScope?: string;
  timeoutMs?: number;
};

const readScopes = ['agent.use', 'studio.project.read'];
const writeScopes = ['agent.use', 'studio.project.write.server'];

const SPECS: Spec[] = [
  {
    name: 'project.get',
    summary: 'Read the project: name, revision and file list.',
    modes: ['ASK', 'BUILD'],
    risk: 'READ_ONLY',
    riskEffects: [],
    riskReversible: true,
    scopes: readScopes,
    approvalPolicy: 'NONE',
    approvalReasons: [],
    input: { type: 'object', properties: {}, additionalProperties: false },
    output: { type: 'object' },
  },
  {
    name: 'workspace.file.list',
    summary: 'List project files with their content hashes and sizes.',
    modes: ['ASK', 'BUILD'],
    risk: 'READ_ONLY',
    riskEffects: [],
    riskReversible: true,
    scopes: readScopes,
    approvalPolicy: 'NONE',
    approvalReasons: [],
    input: {
      type: 'object',
      properties: { prefix: { type: 'string' } },
      additionalProperties: false,
    },
    output: { type: 'object' },
  },
  {
    name: 'workspace.file.read',
    summary: 'Read one project file.',
    modes: ['ASK', 'BUILD'],
    risk: 'READ_ONLY',
    riskEffects: [],
    riskReversible: true,
    scopes: readScopes,
    approvalPolicy: 'NONE',
    approvalReasons: [],
    input: { type: 'object', required: ['path'], properties: { path: { type: 'string' } } },
    output: { type: 'object' },
  },
  {
    name: 'project.checkpoint.list',
    summary: 'List the project checkpoints, newest first.',
    modes: ['ASK', 'BUILD'],
    risk: 'READ_ONLY',
    riskEffects: [],
    riskReversible: true,
    scopes: readScopes,
    approvalPolicy: 'NONE',
    approvalReasons: [],
    input: {
      type: 'object',
      properties: { cursor: { type: 'string' }, limit: { type: 'integer', maximum: 50 } },
    },
    output: { type: 'object' },
  },
  {
    name: 'workspace.file.patch',
    summary:
      'Write up to 16 files after an AGENT_WRITE pre-image checkpoint, under the workspace lease.',
    modes: ['BUILD'],
    risk: 'ROUTINE_WRITE',
    riskEffects: ['project_write', 'checkpoint_create'],
    riskReversible: true,
    scopes: writeScopes,
    approvalPolicy: 'NONE',
    approvalReasons: [],
    idempotencyClass: 'TOOL_CALL_ONCE',
    idempotencyKeyScope: 'TOOL_CALL',
    input: {
      type: 'object',
      required: ['expectedRevision', 'changes'],
      properties: {
        expectedRevision: { type: 'string' },
        changes: { type: 'array', maxItems: 16 },
      },
    },
    output: { type: 'object', required: ['projectRevision', 'checkpointId', 'changedFiles'] },
  },
  {
    name: 'workspace.file.delete',
    summary: 'Delete project files after an AGENT_WRITE pre-image checkpoint.',
    modes: ['BUILD'],
    risk: 'DESTRUCTIVE',
    riskEffects: ['project_write', 'checkpoint_create'],
    riskReversible: true,
    scopes: writeScopes,
    approvalPolicy: 'REQUIRED',
    approvalReasons: ['Deleting files is always approval-gated.'],
    idempotencyClass: 'TOOL_CALL_ONCE',
    idempotencyKeyScope: 'TOOL_CALL',
    input: {
      type: 'object',
      required: ['expectedRevision', 'paths'],
      properties: { expectedRevision: { type: 'string' }, paths: { type: 'array', maxItems: 16 } },
    },
    output: { type: 'object' },
  },
  {
    name: 'project.checkpoint.restore',
    summary:
      'Restore the project to a checkpoint, after a RESTORE_PREIMAGE checkpoint of the current state.',
    modes: ['BUILD'],
    risk: 'DESTRUCTIVE',
    riskEffects: ['checkpoint_create', 'project_restore'],
    riskReversible: true,
    scopes: ['agent.use', 'studio.project.write.server', 'studio.project.write.client'],
    approvalPolicy: 'REQUIRED',
    approvalReasons: ['Restore replaces the current project snapshot.'],
    idempotencyClass: 'KEYED',
    idempotencyKeyScope: 'USER_TOOL_ARGUMENTS',
    timeoutMs: 15_000,
    input: {
      type: 'object',
      required: ['checkpointId', 'checkpointContentHash', 'expectedRevision'],
      properties: {
        checkpointId: { type: 'string' },
        checkpointContentHash: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' },
        expectedRevision: { type: 'string' },
      },
    },
    output: { type: 'object', required: ['project', 'preRestoreCheckpoint'] },
  },
];

function build(spec: Spec): ToolDescriptor {
  const body = {
    schemaVersion: 'crowdy.agent-tool/1',
    name: spec.name,
    wireName: spec.name.replaceAll('.', '_'),
    version: '1.0.0',
    summary: spec.summary,
    executor: 'SERVER' as const,
    modes: spec.modes,
    risk: spec.risk,
    riskEffects: spec.riskEffects,
    riskReversible: spec.riskReversible,
    scopes: spec.scopes,
    scopeRequirementsJson: canonicalJson({ all: spec.scopes }),
    approvalRequired: spec.approvalPolicy === 'REQUIRED',
    approvalPolicy: spec.approvalPolicy,
    approvalReasons: spec.approvalReasons,
    approvalMaxTtlSeconds: spec.approvalPolicy === 'NONE' ? 0 : 120,
    idempotencyClass: spec.idempotencyClass ?? 'PURE',
    idempotencyKeyScope: spec.idempotencyKeyScope ?? 'NONE',
    timeoutMs: spec.timeoutMs ?? 15_000,
    inputSchemaJson: canonicalJson(spec.input),
    outputSchemaJson: canonicalJson(spec.output),
    inputRedactionJson: canonicalJson({ content: 'SUMMARY' }),
    outputRedactionJson: canonicalJson({}),
    maxPersistedBytes: 131072,
  };
  const descriptorJson = canonicalJson(body);
  return { ...body, descriptorJson, descriptorDigest: sha256Digest(descriptorJson) };
}

export const TOOL_DESCRIPTORS: readonly ToolDescriptor[] = SPECS.map(build).sort((a, b) =>
  `${a.name}@${a.version}` < `${b.name}@${b.version}` ? -1 : 1,
);

export function registryDigest(descriptors: readonly ToolDescriptor[]): string {
  return sha256Digest(
    canonicalJson({
      contract: 'crowdy.agent-tools/1',
      descriptors: descriptors.map((d) => ({
        descriptor: JSON.parse(d.descriptorJson) as unknown,
        descriptorDigest: d.descriptorDigest,
      })),
    }),
  );
}

/** The tools a session may use in a mode (the effective set behind its registryDigest). */
export function toolsForMode(mode: AgentMode): ToolDescriptor[] {
  return TOOL_DESCRIPTORS.filter((d) => d.modes.includes(mode));
}

export function findTool(name: string): ToolDescriptor | undefined {
  return TOOL_DESCRIPTORS.find((d) => d.name === name);
}
