/**
 * The format version every row of the run store carries as `v` (checkpoint documents carry their own `v`
 * inside their JSON). A reader meeting a row with a higher `v` was handed a database written by a newer
 * Charter; rows with a lower `v` are read through the upgrade of their version.
 */
export const storeRecordVersion = 1;
