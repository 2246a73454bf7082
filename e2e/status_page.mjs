// The operator's view in a real browser: Debian's Chromium driven by playwright-core against
// `toolgate serve --http`, while a real MCP client (the TypeScript SDK over streamable HTTP)
// holds a session open.
//
//   node status_page.mjs BASE_URL SCREENSHOT.png
//
// BASE_URL is a gateway whose `desk` server is pinned, lists `tidy` and `lamp`, and has a
// quarantined tool `desk__wipe`. The client loads and calls `desk__tidy`, calls `desk__lamp`
// without loading it and `desk__wipe` (both refused), and searches for nonsense (a miss).
// Then the page must show the server, the held tool with its diff, the session with its
// tokens, both refusals, and the last hour's charts (searches, loads, refusals, the slowest
// upstream, the search that found nothing); the screenshot is taken; the search box must
// explain a ranking;
// the Approve button must take `desk__wipe` out of quarantine, after which the client finds
// it. Prints one JSON line of what it saw; exits non-zero, saying why, otherwise.

import { chromium } from "playwright-core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [base, screenshot] = process.argv.slice(2);

function fail(message) {
  console.error(`status_page: ${message}`);
  process.exit(1);
}

function text(result) {
  return (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

const client = new Client({ name: "operator-check", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
const loaded = await client.callTool({ name: "tool_search", arguments: { query: "select:desk__tidy" } });
if (!text(loaded).startsWith("Loaded")) fail(`select:desk__tidy did not load: ${text(loaded)}`);
await client.listTools();
const ran = await client.callTool({ name: "desk__tidy", arguments: {} });
if (text(ran) !== "ran tidy") fail(`desk__tidy: ${text(ran)}`);
const unloaded = await client.callTool({ name: "desk__lamp", arguments: {} });
if (!unloaded.isError) fail("an unloaded tool ran");
const held = await client.callTool({ name: "desk__wipe", arguments: {} });
if (!held.isError || !text(held).includes("held for review")) fail(`desk__wipe: ${text(held)}`);
await client.callTool({ name: "tool_search", arguments: { query: "zqxjv" } });

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: [
    // Playwright runs it headless with a fresh profile of its own.
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});
const seen = {};
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const response = await page.goto(`${base}/`);
  seen.csp = response.headers()["content-security-policy"] ?? "";
  const servers = await page.locator("#servers").innerText();
  if (!/desk\s+stdio\s+ready/.test(servers)) fail(`the servers table: ${servers}`);
  const quarantine = await page.locator("#quarantine").innerText();
  if (!quarantine.includes("desk__wipe") || !quarantine.includes("new")) fail(`quarantine: ${quarantine}`);
  if (!quarantine.includes('+   "description": "Wipe the desk clean"')) fail(`no diff: ${quarantine}`);
  const sessions = await page.locator("#sessions").innerText();
  if (!sessions.includes("operator-check") || !sessions.includes("desk__tidy")) fail(`sessions: ${sessions}`);
  // The tool list's tokens, then what that saves against a full load ("SAVED of FULL").
  const tokens = sessions.match(/\t(\d+)\t(-?\d+) of (\d+)/);
  if (!tokens) fail(`no token figures: ${JSON.stringify(sessions)}`);
  seen.tokens = { tool_list: Number(tokens[1]), saved: Number(tokens[2]), full_load: Number(tokens[3]) };
  const refusals = await page.locator("#refusals").innerText();
  for (const want of ["desk__lamp", "not_loaded", "desk__wipe", "quarantined"]) {
    if (!refusals.includes(want)) fail(`refusals lack ${want}: ${refusals}`);
  }
  // The last hour, drawn by the gateway as SVG: this minute's searches, loads and refusals, the
  // upstream's call time, and the search that found nothing.
  for (const chart of ["chart-saved", "chart-searches", "chart-loads", "chart-refusals"]) {
    if ((await page.locator(`svg#${chart}`).count()) !== 1) fail(`no ${chart}`);
  }
  // Each bar's title holds its count: the bars add up to what the client did (two searches,
  // one load, two refusals), whichever minutes they fell in.
  seen.charted = {};
  for (const [chart, want] of [["chart-searches", 2], ["chart-loads", 1], ["chart-refusals", 2]]) {
    const titles = await page.locator(`svg#${chart} rect title`).allTextContents();
    seen.charted[chart] = titles.reduce((sum, t) => sum + Number(t.split(" ")[0]), 0);
    if (seen.charted[chart] !== want) fail(`${chart} adds up to ${seen.charted[chart]}, not ${want}: ${titles}`);
  }
  const upstreams = await page.locator("#chart-upstreams").textContent();
  if (!upstreams.includes("desk") || !upstreams.includes("ms")) fail(`slowest upstreams: ${upstreams}`);
  const misses = await page.locator("#nothing-fitted").innerText();
  if (!misses.includes("zqxjv")) fail(`nothing fitted: ${misses}`);
  seen.saved_total = Number(await page.locator("#saved-total").innerText());
  seen.scripts = await page.locator("script").count();
  seen.refresh = await page.locator('meta[http-equiv="refresh"]').count();
  await page.screenshot({ path: screenshot, fullPage: true });

  // The search box explains a ranking and loads nothing.
  await page.fill('input[name="q"]', "tidy the desk");
  await Promise.all([page.waitForURL(/\?q=/), page.click("#search")]);
  const results = await page.locator("#results").innerText();
  if (!results.includes("desk__tidy") || !results.includes("via")) fail(`search results: ${results}`);
  seen.search = results.split("\n").find((l) => l.includes("desk__tidy"));

  // Approve the held tool from the page.
  await page.goto(`${base}/`);
  const [approval] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith("/approve")),
    page.click('button[name="approve"][value="desk__wipe"]'),
  ]);
  if (approval.status() !== 303) fail(`the approval answered ${approval.status()}`);
  await page.waitForLoadState("load");
  const now = await page.content();
  if (!now.includes('id="quarantine"')) fail(`after the approval the page is ${page.url()}: ${now.slice(0, 2000)}`);
  const after = await page.locator("#quarantine").innerText();
  if (after.includes("desk__wipe")) fail(`still quarantined after approval: ${after}`);
  seen.after = after.trim();
} finally {
  await browser.close();
}
const found = await client.callTool({ name: "tool_search", arguments: { query: "select:desk__wipe" } });
if (!text(found).startsWith("Loaded")) fail(`the approved tool is not served: ${text(found)}`);
seen.approved = "desk__wipe";
await client.close();
console.log(JSON.stringify(seen));
