import { element } from "./element.js";

export function formatDuration(milliseconds: number | null): string {
  if (milliseconds === null || !Number.isFinite(milliseconds)) return "—";
  if (milliseconds < 1000) return `${Math.round(milliseconds)} ms`;
  const seconds = milliseconds / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${Math.round(seconds - minutes * 60)} s`;
}

export function formatCost(costUsd: number | null): string {
  if (costUsd === null) return "—";
  return `$${costUsd.toFixed(costUsd !== 0 && costUsd < 0.01 ? 4 : 2)}`;
}

export function formatNumber(value: number): string {
  return value.toLocaleString("en-US");
}

export function formatTime(iso: string | null): string {
  if (iso === null) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? iso
    : date
        .toISOString()
        .replace("T", " ")
        .replace(/\.\d+Z$/, " UTC");
}

/** A run's duration: from its start to its end, or to now while it runs. */
export function runDuration(run: {
  readonly createdAt: string;
  readonly finishedAt: string | null;
}): number | null {
  const start = Date.parse(run.createdAt);
  if (run.finishedAt === null) return null;
  return Math.max(0, Date.parse(run.finishedAt) - start);
}

/** A status as a badge: its word is always shown (colour is never the only sign). */
export function statusBadge(status: string): HTMLElement {
  return element(
    "span",
    { class: `badge status-${status.replaceAll("_", "-")}` },
    status.replaceAll("_", " "),
  );
}

/** JSON shown as formatted text. */
export function jsonBlock(value: unknown): HTMLElement {
  return element("pre", { class: "json" }, element("code", {}, JSON.stringify(value, null, 2) ?? "null"));
}
