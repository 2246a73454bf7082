// One cell of the client matrix: a real TypeScript MCP client against toolgate, which stands in
// front of the real server-filesystem and server-memory.
//
//   node matrix.mjs --client ts2|ts1 --mode auto|legacy|pin --transport stdio|http
//                   (--command BIN --args JSON | --url URL) --notes PATH
//
//   --client ts2   @modelcontextprotocol/client 2.x; --mode picks its versionNegotiation:
//                  legacy (initialize, the default), auto (probe server/discover, fall back to
//                  initialize) or pin (2026-07-28 only, no fallback)
//   --client ts1   @modelcontextprotocol/sdk 1.x, which only knows initialize (--mode is ignored)
//   --command/--args   stdio: the gateway command and its arguments as a JSON array, e.g.
//                      --command target/debug/toolgate --args '["serve","--stdio","--config","/tmp/x.toml"]'
//   --url          streamable HTTP: the gateway's endpoint, e.g. http://127.0.0.1:PORT/mcp
//   --notes        a file inside the filesystem server's folder; its content is the marker
//
// The cell: connect; tools/list offers tool_search; tool_search "read a text file" (retried while
// servers are still starting, up to 60 s) loads filesystem__read_text_file; in native exposure
// the next tools/list has it; calling it returns the notes file's content; a call of
// memory__create_entities, never loaded, is refused as a tool error naming
// select:memory__create_entities. It prints one JSON line of facts and exits 0, or exits
// non-zero saying which step was not as expected.

import { readFileSync } from "node:fs";
import { describe } from "./describe.mjs";

const READER = "filesystem__read_text_file";
const INTRUDER = "memory__create_entities";
const PIN = "2026-07-28";

// The step being run, named in the message when the cell fails or hangs.
let step = "parse arguments";

function fail(message) {
  console.error(`matrix.mjs: ${step}: ${message}`);
  process.exit(1);
}

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i];
    if (!key.startsWith("--") || i + 1 >= argv.length) fail(`expected --flag VALUE pairs, got ${argv.slice(i).join(" ")}`);
    args[key.slice(2)] = argv[i + 1];
  }
  if (!["ts2", "ts1"].includes(args.client)) fail("--client must be ts2 or ts1");
  if (args.client === "ts1") args.mode = "legacy";
  if (!["auto", "legacy", "pin"].includes(args.mode)) fail("--mode must be auto, legacy or pin");
  if (!["stdio", "http"].includes(args.transport)) fail("--transport must be stdio or http");
  if (args.transport === "stdio" && !args.command) fail("stdio needs --command (and --args)");
  if (args.transport === "http" && !args.url) fail("http needs --url");
  if (!args.notes) fail("--notes is required");
  try {
    args.args = args.args ? JSON.parse(args.args) : [];
  } catch (e) {
    fail(`--args must be a JSON array: ${e.message}`);
  }
  return args;
}

const opts = parseArgs(process.argv.slice(2));

// A hang is a finding too: after 150 s say which step never finished.
setTimeout(() => fail("no answer after 150 s (hang)"), 150_000);

function text(result) {
  return (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}


const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The two SDKs: the same Client/transport shape, different packages.
async function load(client) {
  if (client === "ts2") {
    const sdk = await import("@modelcontextprotocol/client");
    const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
    return { Client: sdk.Client, Http: sdk.StreamableHTTPClientTransport, Stdio: StdioClientTransport };
  }
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  return { Client, Http: StreamableHTTPClientTransport, Stdio: StdioClientTransport };
}

const { Client, Http, Stdio } = await load(opts.client);

const transport =
  opts.transport === "stdio"
    ? new Stdio({ command: opts.command, args: opts.args })
    : new Http(new URL(opts.url));

// The 1.x client has no getter for the negotiated version: it hands the initialize result's
// version to transport.setProtocolVersion when the transport has one, so catch it there.
let seenVersion;
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (version) => {
  seenVersion = version;
  setVersion?.(version);
};

const negotiation = { auto: { mode: "auto" }, legacy: { mode: "legacy" }, pin: { mode: { pin: PIN } } }[opts.mode];
const client =
  opts.client === "ts2"
    ? new Client({ name: "matrix-ts2", version: "1.0.0" }, { versionNegotiation: negotiation })
    : new Client({ name: "matrix-ts1", version: "1.0.0" });

const facts = { client: opts.client, mode: opts.mode, transport: opts.transport };

// Errors the SDK reports without failing a request (a message it could not handle, say).
facts.sdk_errors = [];
client.onerror = (e) => facts.sdk_errors.push(describe(e));

step = "connect";
try {
  await client.connect(transport);
} catch (e) {
  fail(describe(e));
}
facts.protocol_version = client.getNegotiatedProtocolVersion?.() ?? seenVersion ?? transport.protocolVersion ?? null;
facts.era = client.getProtocolEra?.() ?? "legacy";
const server = client.getServerVersion();
facts.server = server ? { name: server.name, version: server.version } : null;
if (opts.mode === "pin" && facts.protocol_version !== PIN) fail(`pinned ${PIN} but negotiated ${facts.protocol_version}`);

// Every request from here on: a thrown error is a protocol failure, reported with its step.
async function guarded(name, fn) {
  step = name;
  try {
    return await fn();
  } catch (e) {
    fail(describe(e));
  }
}

const first = await guarded("first tools/list", () => client.listTools());
facts.first_list = first.tools.map((t) => t.name);
if (!facts.first_list.includes("tool_search")) fail(`tools/list lacks tool_search: ${facts.first_list}`);
// Bridge exposure offers call_tool next to tool_search and never changes the list.
const bridge = facts.first_list.includes("call_tool");
facts.exposure = bridge ? "bridge" : "native";

// Upstreams start in the background: search again while the answer says some are starting.
const started = Date.now();
let search;
let attempts = 0;
for (;;) {
  attempts += 1;
  search = await guarded("tool_search", () => client.callTool({ name: "tool_search", arguments: { query: "read a text file" } }));
  if (!text(search).includes("still starting") || Date.now() - started > 60_000) break;
  await sleep(500);
}
facts.search_attempts = attempts;
facts.loaded = search.structuredContent?.loaded ?? null;
const loadedText = facts.loaded ? facts.loaded.join(" ") : text(search);
if (search.isError || !loadedText.includes(READER)) fail(`tool_search did not load ${READER}: ${text(search)}`);

// Native exposure: the loaded tool now appears in tools/list.
if (!bridge) {
  const second = await guarded("second tools/list", () => client.listTools());
  facts.second_list = second.tools.map((t) => t.name);
  if (!facts.second_list.includes(READER)) fail(`tools/list after the search lacks ${READER}: ${facts.second_list}`);
}

// Call the loaded tool (through call_tool in bridge exposure); it must return the notes.
// Over HTTP at 2026-07-28 there is no session: the search hands out a grant per loaded tool,
// which the call presents (a tool never searched has none).
const grants = search.structuredContent?.grants ?? {};
facts.granted = Object.keys(grants);
const call = (name, args) =>
  bridge
    ? client.callTool({ name: "call_tool", arguments: { name, arguments: args, ...(grants[name] ? { grant: grants[name] } : {}) } })
    : client.callTool({ name, arguments: args });
const marker = readFileSync(opts.notes, "utf8").trim();
const read = await guarded(`call ${READER}`, () => call(READER, { path: opts.notes }));
if (read.isError || !text(read).includes(marker)) fail(`${READER} did not return "${marker}": ${JSON.stringify(read)}`);
facts.marker = marker;

// A tool the model was never shown: a tool error with the loading hint, never forwarded.
const refused = await guarded(`call ${INTRUDER}`, () =>
  call(INTRUDER, { entities: [{ name: "intruder", entityType: "x", observations: ["y"] }] }),
);
facts.refusal = text(refused);
if (!refused.isError || !facts.refusal.includes(`select:${INTRUDER}`))
  fail(`${INTRUDER} was not refused with a select: hint: ${JSON.stringify(refused)}`);

step = "close";
await client.close().catch(() => {});
console.log(JSON.stringify(facts));
process.exit(0);
