// A browser on a gateway with tokens: Debian's Chromium driven by playwright-core logs in with
// a token once, gets a cookie, and approves a held tool with the page's button.
//
//   node login_page.mjs BASE_URL TOKEN PROFILE_TOKEN
//
// BASE_URL is a gateway with the tokens TOKEN (no profile) and PROFILE_TOKEN (bound to a
// profile), whose `desk` server is pinned with `desk__wipe` held. Prints one JSON line of what
// it saw at each step (observations, not verdicts); exits non-zero only when a step could not
// run.

import { chromium } from "playwright-core";

const [base, token, profileToken] = process.argv.slice(2);
const seen = {};

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
});
try {
  const context = await browser.newContext();
  const page = await context.newPage();
  const first = await page.goto(`${base}/`);
  seen.first_status = first.status();
  seen.first_has_form = (await page.locator("#token").count()) === 1;

  const attempt = async (value) => {
    await page.fill("#token", value);
    const [response] = await Promise.all([
      page.waitForNavigation(),
      page.click("#login"),
    ]);
    return { status: response?.status() ?? null, text: (await page.locator("body").innerText()).slice(0, 400) };
  };
  seen.profile_token = await attempt(profileToken);
  seen.wrong_token = await attempt("not-a-token-of-this-gateway");
  seen.right_token = await attempt(token);
  seen.quarantine = await page.locator("#quarantine").innerText();

  const cookie = (await context.cookies()).find((c) => c.name === "toolgate_login");
  seen.cookie = cookie ? { httpOnly: cookie.httpOnly, sameSite: cookie.sameSite } : null;
  seen.script_sees_cookie = (await page.evaluate(() => document.cookie)).includes("toolgate_login");

  const [approved] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith("/approve")),
    page.click('button[name="approve"][value="desk__wipe"]'),
  ]);
  seen.approve_status = approved.status();
  await page.waitForLoadState("load");
  seen.after = await page.locator("#quarantine").innerText();
} catch (e) {
  seen.error = String(e?.stack ?? e);
  console.log(JSON.stringify(seen));
  await browser.close();
  process.exit(1);
}
await browser.close();
console.log(JSON.stringify(seen));
