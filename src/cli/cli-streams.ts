/** The process streams a command uses, injected so that tests run the CLI in process. */
export interface CliStreams {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WriteStream | (NodeJS.WritableStream & { isTTY?: boolean });
  readonly stdin: NodeJS.ReadableStream;
  readonly signal: AbortSignal;
}
