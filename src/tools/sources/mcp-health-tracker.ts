import type { ErrorCode } from "../../foundation/error-codes.js";
import type { McpServerError, McpServerHealth, McpServerHealthState } from "../mcp-server-health.js";
import type { McpFailure } from "./classify-mcp-failure.js";

/** Holds one server's health as a frozen value and reports each change. */
export class McpHealthTracker {
  #health: McpServerHealth;
  readonly #now: () => number;
  readonly #onChange: ((health: McpServerHealth) => void) | undefined;

  constructor(
    identity: Pick<McpServerHealth, "server" | "type">,
    now: () => number,
    onChange?: (health: McpServerHealth) => void,
  ) {
    this.#now = now;
    this.#onChange = onChange;
    this.#health = Object.freeze({
      ...identity,
      state: "starting",
      since: now(),
      lastError: null,
      reconnections: 0,
    });
  }

  get current(): McpServerHealth {
    return this.#health;
  }

  /** Moves to `state`; a failure, when given, becomes the last error. Reports only actual changes. */
  update(
    state: McpServerHealthState,
    change: { readonly failure?: McpFailure; readonly code?: ErrorCode; readonly reconnected?: boolean } = {},
  ): void {
    const previous = this.#health;
    const lastError =
      change.failure === undefined
        ? previous.lastError
        : this.#errorOf(change.failure, change.code ?? "MCP_SERVER_FAILED");
    if (state === previous.state && lastError === previous.lastError && change.reconnected !== true) return;
    this.#health = Object.freeze({
      ...previous,
      state,
      since: state === previous.state ? previous.since : this.#now(),
      lastError,
      reconnections: previous.reconnections + (change.reconnected === true ? 1 : 0),
    });
    try {
      this.#onChange?.(this.#health);
    } catch {
      // A listener's failure must not change what happens to the call that moved the state.
    }
  }

  #errorOf(failure: McpFailure, code: ErrorCode): McpServerError {
    return Object.freeze({
      code,
      kind: failure.kind,
      reason: failure.reason,
      at: this.#now(),
      ...(failure.httpStatus === undefined ? {} : { httpStatus: failure.httpStatus }),
      ...(failure.systemCode === undefined ? {} : { systemCode: failure.systemCode }),
      ...(failure.exitCode === undefined ? {} : { exitCode: failure.exitCode }),
      ...(failure.signal === undefined ? {} : { signal: failure.signal }),
    });
  }
}
