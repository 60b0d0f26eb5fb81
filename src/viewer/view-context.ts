import type { SessionView } from "./api-types.js";

/** What every view gets: who is signed in, a live region to announce changes, and a way to show an error. */
export interface ViewContext {
  readonly session: SessionView;
  /** Says a change out loud to screen readers (an ARIA live region), once. */
  announce(message: string): void;
  /** Aborted when the person leaves the view: timers, requests and streams stop with it. */
  readonly signal: AbortSignal;
}

/** A view draws itself into `container` and keeps it current until `context.signal` aborts. */
export type View = (container: HTMLElement, context: ViewContext) => void | Promise<void>;
