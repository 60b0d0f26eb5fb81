import type { ChildProcess } from "node:child_process";
import { StdioClientTransport, type StdioServerParameters } from "@modelcontextprotocol/sdk/client/stdio.js";
import { watchedServerCommand } from "./watched-server-command.js";

export interface ChildExit {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
}

const stderrTailCharacters = 4096;

/**
 * The SDK's stdio client transport, plus what it does not expose: how the server process ended, and the tail
 * of what it wrote to stderr. Both go into MCP_SERVER_FAILED so that a person can see why a server failed. The
 * server runs under Charter's watchdog (`watchedServerCommand`), which mirrors its exit and ends it, and its whole
 * process group, within seconds of Charter closing its stdin or dying.
 */
export class ExitObservingStdioTransport extends StdioClientTransport {
  #exit: ChildExit | null = null;
  #stderrTail = "";

  constructor(parameters: Omit<StdioServerParameters, "stderr">) {
    super({
      ...parameters,
      ...watchedServerCommand(parameters.command, parameters.args ?? []),
      stderr: "pipe",
    });
    // Attached before start: the SDK hands out the stderr stream early so that no output is lost.
    this.stderr?.on("data", (chunk: Buffer | string) => {
      this.#stderrTail = (this.#stderrTail + chunk.toString()).slice(-stderrTailCharacters);
    });
  }

  override async start(): Promise<void> {
    await super.start();
    // The SDK keeps the child process private and reports its end without the exit code. It is read once,
    // right after spawning; were the field ever renamed, failures would simply carry no exit code.
    const child = (this as unknown as { _process?: ChildProcess })._process;
    child?.once("exit", (exitCode, signal) => {
      this.#exit = { exitCode, signal };
    });
  }

  /** How the process ended; `null` while it runs (or if it was never started). */
  get exit(): ChildExit | null {
    return this.#exit;
  }

  get stderrTail(): string {
    return this.#stderrTail;
  }
}
