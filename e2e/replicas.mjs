// The official TypeScript MCP SDK against several `toolgate serve --http` gateways that share
// one session store (Redis): a session opened on one gateway is continued on another, as a
// load balancer without sticky sessions would send it.
//
//   node replicas.mjs open URL TOKEN QUERY...
//       opens a session, runs tool_search for each QUERY, lists the tools, and leaves the
//       session open (no DELETE); prints {"session", "tools"}
//   node replicas.mjs resume URL TOKEN SESSION CALL...
//       continues SESSION on URL without initialize (the SDK's reconnect), lists the tools and
//       makes each CALL (JSON {"name", "arguments"}); prints {"tools", "calls": [{"name",
//       "error", "text"}]}; a request the gateway refuses is {"error": true, "text": why}
//   node replicas.mjs notice URL_A URL_B TOOL
//       opens a session on URL_A (whose event stream stays there), loads TOOL through URL_B,
//       and waits (5 s at most) for URL_A to say the tool list changed; prints {"notified",
//       "ms", "listed"}: whether it did, after how long, and whether the re-list on URL_A has
//       TOOL
//   node replicas.mjs load URL_A URL_B SESSIONS CALLS TOOL
//       SESSIONS concurrent sessions, each opened on URL_A or URL_B in turn, loads TOOL
//       (select:) and makes CALLS calls of it with a message of its own, every other call on
//       the other gateway; prints {"sessions", "calls", "lost", "crossed", "p50_ms", "p99_ms",
//       "max_ms", "seconds"}
//
// TOKEN "-" sends no Authorization header. It exits non-zero, saying why, when something is
// not as expected.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, ...args] = process.argv.slice(2);

function fail(message) {
  console.error(`replicas: ${message}`);
  process.exit(1);
}

function transport(url, token, sessionId) {
  const headers = token && token !== "-" ? { Authorization: `Bearer ${token}` } : {};
  return new StreamableHTTPClientTransport(new URL(url), { sessionId, requestInit: { headers } });
}

async function client(url, token, sessionId) {
  const c = new Client({ name: "replicas-check", version: "1.0.0" });
  const t = transport(url, token, sessionId);
  await c.connect(t);
  return { client: c, transport: t };
}

function text(result) {
  return (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

async function open(url, token, queries) {
  const { client: c, transport: t } = await client(url, token);
  for (const query of queries) await c.callTool({ name: "tool_search", arguments: { query } });
  const tools = (await c.listTools()).tools.map((t) => t.name);
  console.log(JSON.stringify({ session: t.sessionId, tools }));
  process.exit(0);
}

async function resume(url, token, session, calls) {
  const { client: c } = await client(url, token, session);
  let tools;
  try {
    tools = (await c.listTools()).tools.map((t) => t.name);
  } catch (e) {
    console.log(JSON.stringify({ tools: null, error: String(e?.message ?? e), calls: [] }));
    process.exit(0);
  }
  const results = [];
  for (const call of calls.map((c) => JSON.parse(c))) {
    try {
      const result = await c.callTool(call);
      results.push({ name: call.name, error: result.isError === true, text: text(result) });
    } catch (e) {
      results.push({ name: call.name, error: true, text: String(e?.message ?? e) });
    }
  }
  console.log(JSON.stringify({ tools, calls: results }));
  process.exit(0);
}

async function notice(home, away, tool) {
  const { client: first, transport: t } = await client(home, "-");
  let changed;
  const heard = new Promise((resolve) => {
    changed = resolve;
  });
  first.setNotificationHandler(ToolListChangedNotificationSchema, () => changed(true));
  await first.listTools();
  const { client: second } = await client(away, "-", t.sessionId);
  const started = Date.now();
  const found = await second.callTool({ name: "tool_search", arguments: { query: `select:${tool}` } });
  if (!text(found).startsWith("Loaded")) fail(`the search did not load ${tool}: ${text(found)}`);
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve(false), 5000);
  });
  const notified = await Promise.race([heard, late]);
  clearTimeout(timer);
  const ms = Date.now() - started;
  const listed = (await first.listTools()).tools.some((t) => t.name === tool);
  console.log(JSON.stringify({ notified, ms, listed }));
  process.exit(0);
}

async function load(urls, sessions, calls, tool) {
  const times = [];
  let lost = 0;
  let crossed = 0;
  const started = Date.now();
  async function one(s) {
    const home = urls[s % 2];
    const away = urls[(s + 1) % 2];
    const { client: first, transport: t } = await client(home, "-");
    const found = await first.callTool({ name: "tool_search", arguments: { query: `select:${tool}` } });
    if (!text(found).startsWith("Loaded")) fail(`session ${s}: the search did not load ${tool}: ${text(found)}`);
    await first.listTools();
    const { client: second } = await client(away, "-", t.sessionId);
    for (let i = 0; i < calls; i++) {
      const message = `session ${s} call ${i}`;
      const c = i % 2 === 0 ? first : second;
      const start = process.hrtime.bigint();
      let result;
      try {
        result = await c.callTool({ name: tool, arguments: { message } });
      } catch (e) {
        lost += 1;
        if (lost <= 3) console.error(`replicas: session ${s} call ${i}: ${e?.message ?? e}`);
        continue;
      }
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
      const got = text(result);
      if (result.isError === true) {
        lost += 1;
        if (lost <= 3) console.error(`replicas: session ${s} call ${i} refused: ${got}`);
      } else if (!got.endsWith(message)) {
        crossed += 1;
        if (crossed <= 3) console.error(`replicas: session ${s} call ${i} got another's answer: ${got}`);
      }
    }
  }
  await Promise.all(Array.from({ length: sessions }, (_, s) => one(s)));
  times.sort((a, b) => a - b);
  const at = (q) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))] * 1000) / 1000;
  const seconds = (Date.now() - started) / 1000;
  console.log(
    JSON.stringify({ sessions, calls: times.length, lost, crossed, p50_ms: at(0.5), p99_ms: at(0.99), max_ms: at(1), seconds }),
  );
  process.exit(0);
}

if (mode === "open") await open(args[0], args[1], args.slice(2));
else if (mode === "resume") await resume(args[0], args[1], args[2], args.slice(3));
else if (mode === "notice") await notice(args[0], args[1], args[2]);
else if (mode === "load") await load([args[0], args[1]], Number(args[2]), Number(args[3]), args[4]);
else fail(`unknown mode ${mode}`);
