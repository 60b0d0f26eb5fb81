import { decodeCursor, encodeCursor } from "./list-cursor.js";

export interface ListPage<Leading, Stored> {
  readonly leading: readonly Leading[];
  readonly stored: readonly Stored[];
  readonly nextCursor: string | null;
}

/**
 * One page of a newest-first listing. The first page (no cursor) starts with `readLeading`'s items (the runs not
 * stored, or not ended, yet: the newest), cut at `limit`; the rest of the page comes from `readStored` at the cursor's
 * offset, which counts stored items only. Without `readStored` the listing is the leading items alone, one page.
 */
export async function listPage<Leading, Stored>(
  cursor: string | undefined,
  limit: number,
  readStored: ((limit: number, offset: number) => Promise<readonly Stored[]>) | null,
  readLeading?: () => Promise<readonly Leading[]>,
): Promise<ListPage<Leading, Stored>> {
  const offset = cursor === undefined ? 0 : decodeCursor(cursor);
  // Only the first page: a later page's cursor (offset 0 too when the leading items filled the first page) goes
  // on with the stored items, so paging never hands out the leading items again.
  const leading =
    cursor === undefined && readLeading !== undefined ? (await readLeading()).slice(0, limit) : [];
  if (readStored === null) return { leading, stored: [], nextCursor: null };
  const room = limit - leading.length;
  // One more than fits: whether there is a next page.
  const stored = await readStored(room + 1, offset);
  return {
    leading,
    stored: stored.slice(0, room),
    nextCursor: stored.length > room ? encodeCursor(offset + room) : null,
  };
}
