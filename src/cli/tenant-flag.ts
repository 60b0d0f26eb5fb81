/** ` --tenant <id>` for a command line (quoted for a shell when it needs to be), or nothing for the default tenant. */
export function tenantFlag(tenantId: string | null): string {
  if (tenantId === null) return "";
  return ` --tenant ${/^[\w.:@+-]+$/.test(tenantId) ? tenantId : `'${tenantId.replaceAll("'", `'\\''`)}'`}`;
}
