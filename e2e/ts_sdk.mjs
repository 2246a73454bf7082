// The official TypeScript MCP SDK (the client inside Claude Code, Cursor and VS Code) against
// `toolgate serve --http`, over streamable HTTP.
//
//   node ts_sdk.mjs bench URL CALLS   loads a tool, then makes CALLS sequential tools/call of it
//                                     and prints one JSON line: {"calls", "p50_ms", "p90_ms",
//                                     "p99_ms", "max_ms"}
//   node ts_sdk.mjs idle URL          for a gateway with session_idle_secs = 3: a session idle
//                                     2 s still works, one idle 5 s gets a clear error (not a
//                                     hang); prints one JSON line of what it saw
//
// It exits non-zero, saying why, when something is not as expected.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, url, count] = process.argv.slice(2);
const TOOL = "playwright__playwright_screenshot";

function fail(message) {
  console.error(`ts_sdk: ${message}`);
  process.exit(1);
}

async function connect() {
  const client = new Client({ name: "ts-sdk-check", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

function text(result) {
  return (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

async function bench(calls) {
  const client = await connect();
  const loaded = await client.callTool({ name: "tool_search", arguments: { query: `select:${TOOL}` } });
  if (!text(loaded).startsWith("Loaded")) fail(`the search did not load ${TOOL}: ${text(loaded)}`);
  await client.listTools();
  const times = [];
  for (let i = 0; i < calls; i++) {
    const start = process.hrtime.bigint();
    const result = await client.callTool({ name: TOOL, arguments: { name: `shot${i}` } });
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    // The embedded catalog's tools are demo tools: reaching one proves the gate let it through.
    if (!text(result).includes("not connected")) fail(`call ${i} did not reach the demo tool: ${text(result)}`);
  }
  times.sort((a, b) => a - b);
  const at = (q) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))] * 1000) / 1000;
  console.log(JSON.stringify({ calls, p50_ms: at(0.5), p90_ms: at(0.9), p99_ms: at(0.99), max_ms: at(1) }));
  await client.close();
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function idle() {
  const client = await connect();
  await sleep(2000);
  const alive = await client.listTools();
  if (!alive.tools.some((t) => t.name === "tool_search")) fail("after 2 s idle the session did not answer");
  await sleep(5000);
  const started = Date.now();
  let error = null;
  let timer;
  const hung = new Promise((resolve) => {
    timer = setTimeout(() => resolve("hung"), 10000);
  });
  try {
    if ((await Promise.race([client.listTools(), hung])) === "hung") fail("after 5 s idle the request hung");
  } catch (e) {
    error = String(e?.message ?? e);
  } finally {
    clearTimeout(timer);
  }
  if (error === null) fail("after 5 s idle the session still answered");
  console.log(JSON.stringify({ alive_after_2s: true, error_after_5s: error, error_in_ms: Date.now() - started }));
  await client.close().catch(() => {});
}

if (mode === "bench") await bench(Number(count ?? 1000));
else if (mode === "idle") await idle();
else fail(`unknown mode ${mode}; use bench or idle`);
