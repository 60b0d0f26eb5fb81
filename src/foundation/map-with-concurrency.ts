/**
 * `work` applied to every entry with at most `limit` running at once, started in the entries' order; resolves with
 * the results in that order once every one has ended (a rejection is kept as such, never stopping the others).
 */
export async function mapWithConcurrency<T, R>(
  entries: readonly T[],
  limit: number,
  work: (entry: T, index: number) => Promise<R>,
): Promise<PromiseSettledResult<R>[]> {
  const results: PromiseSettledResult<R>[] = new Array(entries.length);
  let next = 0;
  const worker = async () => {
    while (next < entries.length) {
      const index = next++;
      try {
        results[index] = { status: "fulfilled", value: await work(entries[index] as T, index) };
      } catch (reason) {
        results[index] = { status: "rejected", reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, entries.length)) }, worker));
  return results;
}
