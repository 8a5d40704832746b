/**
 * "Ask again" for Claude Code. Claude Code cannot re-issue a tool call on request, so the studio
 * continues the conversation with a user message that names the earlier call (tool + input) and
 * asks the model to propose exactly that call again; then it waits for the next `canUseTool` ask
 * of the conversation. That ask is always an ordinary card; when it is the same tool with the same
 * input (canonical, redacted JSON, as stored on the call) its approvalId answers studioAskAgain,
 * otherwise studioAskAgain fails with a clear error. It also fails when the turn ends without an
 * ask, when the run is cancelled (the kill switch too) or the studio stops, and after a bound.
 */
import type { ToolCallRecord } from '../../store/records.ts';
import { ErrorCode } from '../../../protocol/contract.ts';
import { StudioError } from '../../engine/StudioError.ts';

/** How long studioAskAgain waits for Claude Code to propose the call again. */
export const ASK_AGAIN_TIMEOUT_MS = 60_000;

/** The user message that asks Claude Code to propose `call` again. */
export function askAgainMessage(call: ToolCallRecord, status: string | null): string {
  const why =
    status === 'REVOKED'
      ? 'was revoked in the studio before anyone approved it'
      : 'was not decided in time in the studio (its approval expired)';
  return [
    `Your earlier ${call.toolName} call ${why}, so it did not run.`,
    `Please propose exactly the same call again now, with the same tool and the same input, so a person can approve it:`,
    `tool: ${call.toolName}`,
    `input: ${call.argumentsJson ?? '{}'}`,
  ].join('\n');
}

/** One pending studioAskAgain: settled by the conversation's next ask, its end, or the bound. */
export class AskAgainWaiter {
  readonly promise: Promise<string>;
  private settle: ((outcome: { approvalId: string } | { error: StudioError }) => void) | null =
    null;
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly toolName: string,
    readonly argumentsJson: string,
    onSettled: () => void,
    timeoutMs = ASK_AGAIN_TIMEOUT_MS,
  ) {
    this.promise = new Promise<string>((resolve, reject) => {
      this.settle = (outcome) => {
        this.settle = null;
        clearTimeout(this.timer);
        onSettled();
        if ('approvalId' in outcome) resolve(outcome.approvalId);
        else reject(outcome.error);
      };
    });
    this.timer = setTimeout(
      () =>
        this.fail(
          `Claude Code did not propose the call again within ${Math.round(timeoutMs / 1000)} s.`,
        ),
      timeoutMs,
    );
  }

  /** The conversation's next ask (already appended as an ordinary card). */
  asked(toolName: string, argumentsJson: string, approvalId: string): void {
    if (toolName === this.toolName && argumentsJson === this.argumentsJson)
      this.settle?.({ approvalId });
    else
      this.fail(
        `Claude Code proposed a different call (${toolName}) instead of the same ${this.toolName} call; it is waiting for approval as a new card.`,
        ErrorCode.APPROVAL_MISMATCH,
      );
  }

  fail(message: string, code: ErrorCode = ErrorCode.TOOL_FAILED): void {
    this.settle?.({ error: new StudioError(code, message) });
  }
}
