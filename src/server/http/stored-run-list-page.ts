import type { RunRequestRecord } from "../../store/run-event-records.js";
import type { RunQuery, RunStatus, RunSummary } from "../../store/run-record.js";
import type { RunStore } from "../../store/run-store.js";
import { type ListPage, listPage } from "./list-page.js";

export interface StoredRunListQuery {
  readonly status?: RunStatus | "queued";
  readonly limit: number;
  readonly cursor?: string;
}

/**
 * One page of `GET /v1/runs` or `GET /v1/workflows/runs`: the tenant's runs waiting for a worker (no run row yet)
 * lead the first page, each that `accepts` as `view` shows it (`status=queued` lists only those whose view is
 * queued), then its stored runs (`filter`: their kind or agent) by the cursor's offset.
 */
export async function storedRunListPage<View extends { readonly status: string }>(
  tenantStore: RunStore,
  query: StoredRunListQuery,
  filter: Pick<RunQuery, "kind" | "agentId">,
  queued: {
    readonly accepts: (accepted: RunRequestRecord) => boolean;
    readonly view: (accepted: RunRequestRecord) => View | Promise<View>;
  },
): Promise<ListPage<View, RunSummary>> {
  const { status } = query;
  return listPage(
    query.cursor,
    query.limit,
    status === "queued"
      ? null
      : (room, offset) =>
          tenantStore.listRuns({
            ...filter,
            limit: room,
            offset,
            ...(status !== undefined ? { status } : {}),
          }),
    status === undefined || status === "queued"
      ? async () => {
          const views: View[] = [];
          // Few wait at a time; past the page's `limit` they are cut.
          for (const accepted of await tenantStore.listQueuedRunRequests({ limit: 1000 })) {
            if (!queued.accepts(accepted)) continue;
            const view = await queued.view(accepted);
            if (status === undefined || view.status === status) views.push(view);
          }
          return views;
        }
      : undefined,
  );
}
