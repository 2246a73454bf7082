// The stateless run of the TypeScript client (@modelcontextprotocol/client 2.x), pinned to
// 2026-07-28 (no `initialize`, no session: every request carries its revision and capabilities
// in `_meta`), against toolgate over streamable HTTP, usually through `round_robin.py` in front
// of two gateway replicas, in front of `changing_server.py` (server `changing`: `greet {name}`
// and `secret_op {}`).
//
//   node stateless.mjs URL TOKEN CHANGING_FILE                        (alice's run)
//   node stateless.mjs URL TOKEN CHANGING_FILE --reader [--stolen-grant=GRANT]
//
//   URL            the gateway's endpoint, e.g. http://127.0.0.1:PORT/mcp
//   TOKEN          the bearer token sent with every request
//   CHANGING_FILE  the file whose content is greet's version (this script writes a new one)
//
// Alice's run: connect (the pinned client probes `server/discover`); `tools/list`; `tool_search`
// for greet (retried while servers are still starting, up to 60 s); greet called through
// `call_tool` with its grant, and directly (`tools/call` with `_meta["toolgate/grant"]`);
// `changing__secret_op`, never searched, called without a grant and with greet's grant (both
// ways); then a new version is written to CHANGING_FILE and, 1.5 s later, greet is called with
// the old grant (both ways), searched again and called with the new grant; last,
// `select:changing__secret_op` is searched (its grant is printed for the reader's run, never
// used here).
//
// The reader's run (a token whose profile denies `changing__secret_op`): connect, `tools/list`,
// searches for the secret tool (its exact `select:` name included) and for greet, and calls of
// `changing__secret_op` without a grant and with the grant alice got (both ways).
//
// It prints ONE JSON line of what it observed at each step (texts, isError flags, listed tools,
// `ttlMs` and `cacheScope` as they came on the wire, structured content): observations, not
// verdicts; the Rust test (crates/toolgate-cli/tests/stateless.rs) asserts. A request that
// throws (a protocol error) or hangs ends the run: the line printed then has `error`, naming
// the step, and it exits 1.

import { readFileSync, writeFileSync } from "node:fs";

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe } from "./describe.mjs";

const PIN = "2026-07-28";
const GREET = "changing__greet";
const SECRET = "changing__secret_op";
const GREET_QUERY = "greet someone by name";
const GRANT_META = "toolgate/grant";

function usage(message) {
  console.error(`stateless.mjs: ${message}`);
  console.error("usage: node stateless.mjs URL TOKEN CHANGING_FILE [--reader [--stolen-grant=GRANT]]");
  process.exit(2);
}

function parseArgs(argv) {
  const positional = [];
  const opts = { reader: false, stolenGrant: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--reader") opts.reader = true;
    else if (argv[i].startsWith("--stolen-grant=")) opts.stolenGrant = argv[i].slice("--stolen-grant=".length);
    else if (argv[i] === "--stolen-grant") {
      if (i + 1 >= argv.length) usage("--stolen-grant needs a value");
      opts.stolenGrant = argv[++i];
    } else if (argv[i].startsWith("--")) usage(`unknown flag ${argv[i]}`);
    else positional.push(argv[i]);
  }
  if (positional.length !== 3) usage("expected URL TOKEN CHANGING_FILE");
  [opts.url, opts.token, opts.changingFile] = positional;
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const facts = { client: "ts", run: opts.reader ? "reader" : "alice" };

// The step being run, named when the run fails or hangs.
let step = "connect";

function fail(message) {
  facts.error = `${step}: ${message}`;
  console.log(JSON.stringify(facts));
  console.error(`stateless.mjs: ${facts.error}`);
  process.exit(1);
}

// A hang is a finding too: after 150 s say which step never finished.
setTimeout(() => fail("no answer after 150 s (hang)"), 150_000);


const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function guarded(name, fn) {
  step = name;
  try {
    return await fn();
  } catch (e) {
    fail(describe(e));
  }
}

function observe(result) {
  const text = (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  return { text, isError: result.isError === true, structured: result.structuredContent ?? null };
}

const transport = new StreamableHTTPClientTransport(new URL(opts.url), {
  requestInit: { headers: { Authorization: `Bearer ${opts.token}` } },
});
const client = new Client(
  { name: "stateless-ts", version: "1.0.0" },
  { versionNegotiation: { mode: { pin: PIN } } },
);
facts.sdk_errors = [];
client.onerror = (e) => facts.sdk_errors.push(describe(e));

await guarded("connect (server/discover)", () => client.connect(transport));
facts.protocol_version = client.getNegotiatedProtocolVersion?.() ?? null;
facts.instructions = client.getInstructions() ?? null;
facts.discover_versions = client.getDiscoverResult?.()?.supportedVersions ?? null;

// The tools/list result as it came on the wire (the SDK's parsed copy may fill defaults).
let rawList = null;
const deliver = transport.onmessage;
transport.onmessage = (message, extra) => {
  if (Array.isArray(message?.result?.tools)) rawList = message.result;
  deliver?.call(transport, message, extra);
};

async function listTools() {
  const listed = await guarded("tools/list", () => client.listTools(undefined, { cacheMode: "bypass" }));
  facts.tools = listed.tools.map((t) => t.name);
  facts.ttlMs = rawList?.ttlMs ?? null;
  facts.cacheScope = rawList?.cacheScope ?? null;
}

async function call(name, args, meta) {
  const params = { name, arguments: args };
  if (meta) params._meta = meta;
  const label = meta ? `tools/call ${name} (grant in _meta)` : `call ${name} ${JSON.stringify(args)}`;
  return observe(await guarded(label, () => client.callTool(params)));
}

// tool_search, again while the answer says servers are still starting (60 s at most).
async function search(query) {
  const started = Date.now();
  let seen;
  for (;;) {
    seen = await call("tool_search", { query });
    if (!seen.text.includes("still starting") || Date.now() - started > 60_000) break;
    await sleep(500);
  }
  const structured = seen.structured && typeof seen.structured === "object" ? seen.structured : {};
  seen.loaded = structured.loaded ?? null;
  seen.grants = structured.grants ?? null;
  seen.schemas = structured.schemas && typeof structured.schemas === "object" ? Object.keys(structured.schemas).sort() : null;
  return seen;
}

const grantOf = (found, name) => found.grants?.[name] ?? null;

// A call through call_tool, with the grant when there is one.
function bridged(name, args, grant) {
  const params = { name, arguments: args };
  if (grant !== null) params.grant = grant;
  return call("call_tool", params);
}

// A plain tools/call of the tool, its grant in _meta when there is one.
function direct(name, args, grant) {
  return call(name, args, grant !== null ? { [GRANT_META]: grant } : undefined);
}

async function alice() {
  await listTools();
  facts.search = await search(GREET_QUERY);
  const grant = grantOf(facts.search, GREET);
  facts.grant = grant;
  facts.call_bridge = await bridged(GREET, { name: "Ada" }, grant);
  facts.call_direct = await direct(GREET, { name: "Bob" }, grant);

  // Never searched: no grant, or greet's grant for another tool.
  facts.unloaded_bridge = await bridged(SECRET, {}, null);
  facts.unloaded_direct = await direct(SECRET, {}, null);
  facts.wrong_grant_bridge = await bridged(SECRET, {}, grant);
  facts.wrong_grant_direct = await direct(SECRET, {}, grant);

  // greet's definition changes upstream: the old grant no longer works, a new search's does.
  step = "write CHANGING_FILE";
  facts.old_version = readFileSync(opts.changingFile, "utf8").trim();
  facts.new_version = `ts-${process.hrtime.bigint()}`;
  writeFileSync(opts.changingFile, `${facts.new_version}\n`);
  await sleep(1500);
  facts.old_grant_bridge = await bridged(GREET, { name: "Cy" }, grant);
  facts.old_grant_direct = await direct(GREET, { name: "Cy" }, grant);
  facts.search_again = await search(GREET_QUERY);
  const newGrant = grantOf(facts.search_again, GREET);
  facts.new_grant = newGrant;
  facts.new_grant_bridge = await bridged(GREET, { name: "Dee" }, newGrant);
  facts.new_grant_direct = await direct(GREET, { name: "Eve" }, newGrant);

  // A grant for the secret tool, for the reader's run to try; never used here.
  facts.secret_search = await search(`select:${SECRET}`);
  facts.secret_grant = grantOf(facts.secret_search, SECRET);
}

async function reader() {
  await listTools();
  facts.searches = {};
  for (const query of [`select:${SECRET}`, "secret_op", "run the secret operation", "secret", GREET_QUERY]) {
    facts.searches[query] = await search(query);
  }
  facts.unloaded_bridge = await bridged(SECRET, {}, null);
  facts.unloaded_direct = await direct(SECRET, {}, null);
  if (opts.stolenGrant !== null) {
    facts.stolen_grant_bridge = await bridged(SECRET, {}, opts.stolenGrant);
    facts.stolen_grant_direct = await direct(SECRET, {}, opts.stolenGrant);
  }
}

if (opts.reader) await reader();
else await alice();

step = "close";
await client.close().catch(() => {});
console.log(JSON.stringify(facts));
process.exit(0);
