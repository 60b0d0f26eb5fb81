import { ApiError, credentials, getJson } from "./api-client.js";
import type { SessionView } from "./api-types.js";
import { approvalsView } from "./approvals-view.js";
import { element, replaceChildren } from "./element.js";
import { runDetailView } from "./run-detail-view.js";
import { runsView } from "./runs-view.js";
import { statsView } from "./stats-view.js";
import type { View } from "./view-context.js";
import { workItemDetailView, workItemsView } from "./work-item-views.js";
import { workflowDetailView, workflowsView } from "./workflow-views.js";

/**
 * The run viewer's entry point: signs the person in (an API key or a JWT, kept for this tab only, or the one-time
 * token `charter view` prints in its address), then shows the view the address's fragment names:
 * `#/runs`, `#/runs/<id>`, `#/workflows[/<id>]`, `#/work-items[/<id>]`, `#/approvals`, `#/stats`.
 */
const root = document.getElementById("app") as HTMLElement;
const announcer = element("div", {
  class: "visually-hidden",
  role: "status",
  "aria-live": "polite",
  id: "announcer",
});
document.body.appendChild(announcer);

function announce(message: string): void {
  // Cleared first, so that the same message said twice is still read out.
  announcer.textContent = "";
  setTimeout(() => {
    announcer.textContent = message;
  }, 50);
}

let current: AbortController | null = null;

function route(): { readonly view: View; readonly name: string } {
  const path = location.hash.replace(/^#/, "") || "/runs";
  const run = /^\/runs\/([^/]+)$/.exec(path);
  if (run !== null) return { view: runDetailView(decodeURIComponent(run[1] as string)), name: "runs" };
  const workflow = /^\/workflows\/([^/]+)$/.exec(path);
  if (workflow !== null)
    return { view: workflowDetailView(decodeURIComponent(workflow[1] as string)), name: "workflows" };
  if (path === "/workflows") return { view: workflowsView, name: "workflows" };
  const workItem = /^\/work-items\/([^/]+)$/.exec(path);
  if (workItem !== null)
    return { view: workItemDetailView(decodeURIComponent(workItem[1] as string)), name: "work-items" };
  if (path === "/work-items") return { view: workItemsView, name: "work-items" };
  if (path === "/approvals") return { view: approvalsView, name: "approvals" };
  if (path === "/stats") return { view: statsView, name: "stats" };
  return { view: runsView, name: "runs" };
}

function shell(session: SessionView): HTMLElement {
  const main = element("main", { id: "main", tabindex: "-1" });
  const link = (href: string, name: string, label: string) => element("a", { href, "data-nav": name }, label);
  const signOut = element("button", { type: "button", class: "link-button" }, "Sign out");
  signOut.addEventListener("click", () => {
    credentials.clear();
    location.hash = "";
    void start();
  });
  replaceChildren(
    root,
    element(
      "a",
      {
        class: "skip-link",
        href: "#main",
        onclick: (event) => {
          event.preventDefault();
          main.focus();
        },
      },
      "Skip to content",
    ),
    element(
      "header",
      { class: "top" },
      element("span", { class: "brand" }, "Charter"),
      element(
        "nav",
        { "aria-label": "Views" },
        link("#/runs", "runs", "Runs"),
        link("#/workflows", "workflows", "Workflows"),
        link("#/work-items", "work-items", "Work items"),
        link("#/approvals", "approvals", "Approvals"),
        link("#/stats", "stats", "Statistics"),
      ),
      element(
        "span",
        { class: "who" },
        `${session.tenantId ?? "local store"} · ${session.userId ?? "no user"} · ${session.role}${session.readOnly ? " · read-only" : ""}`,
      ),
      signOut,
    ),
    main,
  );
  return main;
}

async function show(main: HTMLElement, session: SessionView, moveFocus: boolean): Promise<void> {
  current?.abort();
  const controller = new AbortController();
  current = controller;
  const { view, name } = route();
  for (const link of document.querySelectorAll<HTMLAnchorElement>("[data-nav]")) {
    if (link.dataset.nav === name) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  try {
    await view(main, { session, announce, signal: controller.signal });
  } catch (error) {
    if (controller.signal.aborted) return;
    if (error instanceof ApiError && error.status === 401) {
      credentials.clear();
      void start("Your credentials are no longer accepted: sign in again.");
      return;
    }
    replaceChildren(main, element("p", { class: "error", role: "alert" }, (error as Error).message));
  }
  const heading = main.querySelector("h1");
  if (heading !== null) document.title = `${heading.textContent} · Charter`;
  if (moveFocus) main.focus();
}

function signInForm(message: string | null): void {
  current?.abort();
  const input = element("input", {
    id: "credential",
    name: "credential",
    type: "password",
    autocomplete: "off",
    required: true,
    "aria-describedby": "credential-help",
  });
  const error = element("p", { class: "error", role: "alert", id: "sign-in-error" }, message ?? "");
  const form = element(
    "form",
    { class: "sign-in", "aria-labelledby": "sign-in-heading" },
    element("h1", { id: "sign-in-heading" }, "Sign in to Charter"),
    element("label", { for: "credential" }, "API key or token"),
    input,
    element(
      "p",
      { id: "credential-help", class: "muted" },
      "An API key (chk_…, from charter keys create) or your identity provider's token. It is kept in this tab only and sent to this server alone.",
    ),
    element("button", { type: "submit" }, "Sign in"),
    error,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    credentials.set(input.value.trim());
    void start();
  });
  replaceChildren(root, element("main", { id: "main" }, form));
  document.title = "Sign in · Charter";
  input.focus();
}

/** `charter view` prints an address with a one-time token: exchanged here for this tab's credential. */
async function exchangeOneTimeToken(): Promise<string | null> {
  const token = new URLSearchParams(location.search).get("token");
  if (token === null) return null;
  history.replaceState(null, "", location.pathname + location.hash);
  const response = await fetch("/v1/view/session", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token }),
  });
  if (!response.ok) return "This sign-in link was already used or is not valid: run charter view again.";
  const { credential } = (await response.json()) as { credential: string };
  credentials.set(credential);
  return null;
}

async function start(message: string | null = null): Promise<void> {
  const problem = (await exchangeOneTimeToken().catch(() => "Could not use the sign-in link.")) ?? message;
  if (credentials.get() === null) {
    signInForm(problem);
    return;
  }
  let session: SessionView;
  try {
    session = await getJson<SessionView>("/v1/session");
  } catch (error) {
    credentials.clear();
    signInForm(error instanceof ApiError ? `Not signed in: ${error.message}` : (error as Error).message);
    return;
  }
  const main = shell(session);
  window.onhashchange = () => void show(main, session, true);
  await show(main, session, false);
}

void start();
