import { postJson } from "./api-client.js";
import type { PendingApprovalView, RunView } from "./api-types.js";
import { element } from "./element.js";
import { jsonBlock } from "./format.js";
import type { ViewContext } from "./view-context.js";

/**
 * A run's pending destructive calls, each with its arguments and, for a role that may decide, approve and deny
 * buttons. A decision is sent once (the buttons are disabled while it goes) and announced; `decided` is told so
 * that the view reads the run again.
 */
export function approvalList(
  run: RunView,
  pending: readonly PendingApprovalView[],
  context: ViewContext,
  decided: () => void,
): HTMLElement {
  const mayDecide = context.session.permissions.includes("runs.approve");
  return element(
    "ul",
    { class: "approvals" },
    pending.map((call) => {
      const status = element("p", { class: "decision", role: "status" });
      const decide = async (decision: "approve" | "deny", buttons: HTMLButtonElement[]) => {
        for (const button of buttons) button.disabled = true;
        status.textContent = decision === "approve" ? "Approving…" : "Denying…";
        try {
          await postJson(`/v1/runs/${encodeURIComponent(run.runId)}/approvals`, {
            callId: call.callId,
            decision,
          });
          const said = `${decision === "approve" ? "Approved" : "Denied"} ${call.tool} (${call.callId}); the run continues.`;
          status.textContent = said;
          context.announce(said);
          decided();
        } catch (error) {
          status.textContent = `Could not ${decision}: ${(error as Error).message}`;
          for (const button of buttons) button.disabled = false;
        }
      };
      const approve = element("button", { type: "button", class: "approve" }, `Approve ${call.tool}`);
      const deny = element("button", { type: "button", class: "deny" }, `Deny ${call.tool}`);
      approve.addEventListener("click", () => void decide("approve", [approve, deny]));
      deny.addEventListener("click", () => void decide("deny", [approve, deny]));
      return element(
        "li",
        { class: "approval", "data-call-id": call.callId },
        element(
          "h3",
          {},
          `${call.tool} `,
          element("span", { class: "muted" }, `call ${call.callId}, turn ${call.turn}`),
        ),
        element("p", {}, "Arguments:"),
        jsonBlock(call.arguments),
        mayDecide
          ? element("div", { class: "buttons" }, approve, deny)
          : element(
              "p",
              { class: "muted" },
              context.session.readOnly
                ? "This viewer is read-only: decide from a server with an operator's key."
                : `Your role (${context.session.role}) may not decide approvals.`,
            ),
        status,
      );
    }),
  );
}
