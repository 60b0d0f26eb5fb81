/** A one-line human description of anything thrown, for the text a model or a person reads. Never throws. */
export function describeError(error: unknown): string {
  try {
    if (error instanceof Error) {
      const message = error.message.trim();
      return message === "" ? error.name : message;
    }
    if (typeof error === "string") return error;
    return JSON.stringify(error) ?? String(error);
  } catch {
    return "unknown error";
  }
}
