import { ApiError, getJson } from "./api-client.js";
import { element, replaceChildren } from "./element.js";
import type { ViewContext } from "./view-context.js";

/** How often a run's page is read again while the run has not settled. */
const refreshMilliseconds = 3000;

export interface RunDetailOptions<Run> {
  readonly runId: string;
  /** The link back to the list: its hash route and its text ("← All workflow runs"). */
  readonly back: { readonly href: string; readonly text: string };
  /** The heading before the run id: "Workflow run ". */
  readonly heading: string;
  /** The API path the run is read from. */
  readonly path: string;
  /** Said when the API answers 404: the run is not in the caller's tenant (or does not exist). */
  readonly notFound: string;
  /** Draws the run into `content`, replacing what was there. */
  readonly draw: (content: HTMLElement, run: Run) => void;
  /** When given, the page is read again every 3 seconds until this says the run has settled. */
  readonly settled?: (run: Run) => boolean;
}

/**
 * The page of one run of a kind (a workflow run, a work item run): a link back to the list, a heading with the run
 * id, and the run as `draw` shows it, or what went wrong reading it. The frame, the read and the not-found message
 * are the same for every kind, so they are written once here.
 */
export function runDetailPage<Run>(options: RunDetailOptions<Run>) {
  return async (container: HTMLElement, context: ViewContext): Promise<void> => {
    const content = element("div", {}, element("p", { class: "muted" }, "Loading…"));
    replaceChildren(
      container,
      element("p", {}, element("a", { href: options.back.href }, options.back.text)),
      element("h1", {}, options.heading, element("code", {}, options.runId)),
      content,
    );
    let timer: ReturnType<typeof setTimeout> | undefined;
    const refresh = async () => {
      let run: Run;
      try {
        run = await getJson<Run>(options.path, context.signal);
      } catch (error) {
        if (context.signal.aborted) return;
        replaceChildren(
          content,
          element(
            "p",
            { class: "error", role: "alert" },
            error instanceof ApiError && error.status === 404 ? options.notFound : (error as Error).message,
          ),
        );
        return;
      }
      options.draw(content, run);
      const settled = options.settled?.(run) ?? true;
      if (!settled && !context.signal.aborted) timer = setTimeout(refresh, refreshMilliseconds);
    };
    context.signal.addEventListener("abort", () => clearTimeout(timer));
    await refresh();
  };
}
