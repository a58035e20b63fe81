// Types of engine protocol v1 (docs/engine-protocol.md) for an engine written in
// TypeScript: compile it to JavaScript and import `run` from turnsim_engine.mjs.

export declare const PROTOCOL_VERSION: 1;
export declare class Refused extends Error {}
export declare class RestoreFailed extends Error {}

export type Block =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "tool_result"; tool_use_id: string; content: string | Block[]; is_error?: boolean }
  | { type: string; [field: string]: unknown };
export type Message = { role: "user" | "assistant"; content: string | Block[] };

export type ToolSpec = { name: string; description: string; input_schema: unknown };
export type ToolCall = { id: string; name: string; input: unknown };
export type ToolOutcome = { tool_use_id: string; content: string; is_error: boolean };
export type CancelCause = "user" | "cost_cap" | "restart" | "host" | "driver";
export type InterruptReason = CancelCause | "unknown" | "crash";
export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "refusal" | "pause_turn";
export type Config = {
  system: string;
  tools: ToolSpec[];
  session_key: string;
  stance: string;
  max_truncated_resumes: number;
};

export type StreamEvent =
  | { event: "message_start" }
  | {
      event: "block_start";
      index: number;
      block: { type: "text" } | { type: "thinking" } | { type: "redacted_thinking"; data: string } | { type: "tool_use"; id: string; name: string };
    }
  | { event: "text_delta"; index: number; text: string }
  | { event: "thinking_delta"; index: number; thinking: string }
  | { event: "signature_delta"; index: number; signature: string }
  | { event: "input_json_delta"; index: number; partial_json: string }
  | { event: "block_stop"; index: number }
  | { event: "message_delta"; stop_reason: StopReason; usage: { input_tokens: number; output_tokens: number } }
  | { event: "message_stop" }
  | { event: "error"; kind: string; message: string };

export type Input =
  | { input: "prompt"; text: string; now: string }
  | { input: "stream"; op: number; event: StreamEvent }
  | { input: "tool_result"; op: number; outcome: ToolOutcome }
  | { input: "cancel"; cause: CancelCause }
  | { input: "compact"; summary: string }
  | { input: "rewind"; index: number }
  | { input: "configure"; system: string; tools: ToolSpec[] };

export type TurnOutcome =
  | { outcome: "end_turn" }
  | { outcome: "max_tokens" }
  | { outcome: "cancelled"; reason: InterruptReason }
  | { outcome: "failed"; reason: string }
  | { outcome: "crashed" };

export type Request = {
  system: string;
  tools: ToolSpec[];
  messages: Message[];
  cache: { session_key: string; breakpoints: { after_message: number | null }[] };
};

/** Outputs as the engine returns them; the adapter base64-encodes persist bytes. */
export type Output =
  | { output: "persist"; bytes: Uint8Array }
  | { output: "truncate_log"; len: number }
  | { output: "send"; op: number; request: Request }
  | { output: "dispatch"; op: number; calls: ToolCall[] }
  | { output: "abort"; op: number }
  | { output: "turn_ended"; outcome: TurnOutcome }
  | { output: "activity"; activity: { kind: string; data: Record<string, string> } };

export type Pending =
  | { pending: "none" }
  | { pending: "generation"; op: number }
  | { pending: "tools"; op: number; calls: ToolCall[] };

export interface Engine {
  /** Never mutate a message once it is in the history. */
  readonly history: Message[];
  handle(input: Input): Output[];
  pending(): Pending;
  idle(): boolean;
  state(): string;
  fixedTexts(): string[];
}

export declare function run(
  name: string,
  create: (config: Config) => Engine,
  restore: (config: Config, log: Buffer) => [Engine, Output[]],
): void;
