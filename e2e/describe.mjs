// How the e2e drivers report an error a client threw: one line with its class, message, and
// the JSON-RPC code and data when it has them.
export function describe(e) {
  let line = `${e?.constructor?.name ?? "Error"}: ${e?.message ?? e}`;
  if (e?.code !== undefined) line += ` (code ${e.code})`;
  if (e?.data !== undefined) line += ` data ${JSON.stringify(e.data)}`;
  return line;
}
