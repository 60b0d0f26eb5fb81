/**
 * A destructive call a run stopped for (outcome INTERRUPTED, `APPROVAL_REQUIRED`), as the user is shown it before
 * `charter resume --approve|--deny <call-id>`: its turn, call id, tool and arguments, redacted as the transcript is.
 */
export interface PendingApproval {
  /** The turn whose EXECUTE the call belongs to: a decision applies to that turn's call only. */
  readonly turn: number;
  readonly callId: string;
  readonly tool: string;
  /** The arguments as the transcript holds them: registered secrets and credential-bearing keys redacted. */
  readonly arguments: unknown;
  /** Set when the call waits for an answer to its server's question (`charter resume --answer`), not an approval. */
  readonly question?: {
    readonly server: string;
    readonly message: string;
    readonly requestedSchema: Readonly<Record<string, unknown>>;
  };
}
