/**
 * How long a provider asked us to wait, from its response headers: `retry-after-ms` (milliseconds, as
 * OpenAI sends) first, then `Retry-After` as delta-seconds or as an HTTP date measured against `now`.
 * Null when neither header is present or parseable. Header names are matched case-insensitively.
 */
export function parseRetryAfterMs(
  headers: Readonly<Record<string, string | undefined>> | undefined,
  now: number,
): number | null {
  if (headers === undefined) return null;
  let milliseconds: string | undefined;
  let seconds: string | undefined;
  for (const name of Object.keys(headers)) {
    const lower = name.toLowerCase();
    if (lower === "retry-after-ms") milliseconds = headers[name];
    else if (lower === "retry-after") seconds = headers[name];
  }
  const fromMilliseconds = parseNonNegativeNumber(milliseconds);
  if (fromMilliseconds !== null) return Math.ceil(fromMilliseconds);
  if (seconds === undefined) return null;
  const fromSeconds = parseNonNegativeNumber(seconds);
  if (fromSeconds !== null) return Math.ceil(fromSeconds * 1000);
  // Every HTTP-date form names a day or month; without letters, Date.parse would read "-5" as a year.
  if (!/[A-Za-z]/.test(seconds)) return null;
  const date = Date.parse(seconds);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now);
}

function parseNonNegativeNumber(value: string | undefined): number | null {
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (!/^\d+(\.\d+)?$/.test(trimmed)) return null;
  return Number(trimmed);
}
