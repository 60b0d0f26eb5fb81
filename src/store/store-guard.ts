import { storeError, toStoreError } from "./store-errors.js";

/**
 * Runs a store operation: refuses it once the store is closing and turns whatever the driver throws into a
 * CharterError (see toStoreError).
 */
export type StoreGuard = <T>(
  operation: string,
  details: Record<string, unknown>,
  work: () => Promise<T>,
) => Promise<T>;

export interface StoreLifecycle {
  readonly guard: StoreGuard;
  /**
   * Refuses new operations, then resolves once those under way have settled: true the first time, when the
   * caller should release the database; false afterwards.
   */
  close(): Promise<boolean>;
}

export function createStoreGuard(): StoreLifecycle {
  let closed = false;
  const running = new Set<Promise<unknown>>();

  async function guard<T>(
    operation: string,
    details: Record<string, unknown>,
    work: () => Promise<T>,
  ): Promise<T> {
    if (closed) {
      throw storeError("store_unavailable", `${operation}: the run store is closed`, {
        ...details,
        operation,
      });
    }
    let operationPromise: Promise<T> | null = null;
    try {
      operationPromise = work();
      running.add(operationPromise);
      return await operationPromise;
    } catch (error) {
      throw toStoreError(error, operation, details);
    } finally {
      if (operationPromise !== null) running.delete(operationPromise);
    }
  }

  return {
    guard,
    async close() {
      if (closed) return false;
      closed = true;
      await Promise.allSettled([...running]);
      return true;
    },
  };
}
