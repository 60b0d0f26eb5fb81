/** The process streams (and facts about the process) a command uses, injected so that tests run the CLI in process. */
export interface CliStreams {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WriteStream | (NodeJS.WritableStream & { isTTY?: boolean });
  readonly stdin: NodeJS.ReadableStream;
  readonly signal: AbortSignal;
  /**
   * The directory of the `charter` command that is running: configuration layer 4 (`<dir>/.charter.json`) is
   * read from it. Absent when the CLI runs in process (tests), where that layer is skipped.
   */
  readonly binaryDirectory?: string;
}
