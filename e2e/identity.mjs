// Identity, tried as a hostile upstream, a co-tenant and a stranger would: a real
// `toolgate serve --http` with [oauth] in front of a real OpenID provider (oidc_provider.mjs),
// real MCP servers protected by the official SDK's bearer middleware (protected_upstream.mjs),
// one of which lies about its authorization server, naming an attacker's (rogue_as.mjs), which
// writes down everything it is sent. Prints one JSON object of what each party received or
// caused; crates/toolgate-cli/tests/identity.rs judges it.
//
// Usage: node identity.mjs --toolgate PATH_TO_TOOLGATE [--flood-seconds N]
//
// What runs:
// - provider A (the team's issuer, access tokens living 40 s), counting the requests it gets;
// - the rogue authorization server R;
// - upstream E (per-user: token exchange), upstream U (honest, client credentials and a login)
//   and upstream L, whose protected-resource metadata names R;
// - `toolgate login person` (U, honest, a public client) and `toolgate login login_liar` (L,
//   with a client secret), each driven as a person would;
// - `toolgate serve` with servers each (E), cc and person (U), each_liar, cc_liar and
//   login_liar (L).
// Stages: what R got from the lying upstream's servers and from a refresh after U starts lying
// too; whose token each kind of request to E carried (calls, prompts, resources, completions;
// alice, bob and a static token); what 120 spellings of the issuer, made-up key ids beside a
// real token signed with a key rotated in a moment before, and a flood of unsigned tokens cost
// the provider and the gateway.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { SignJWT, importJWK } from 'jose';

import {
  b64url, children, freePort, openSession, rpc, run, startJson, toolgateLogin, untilSettled,
} from './oauth_lab.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const toolgate = args[args.indexOf('--toolgate') + 1];
if (!toolgate || args.indexOf('--toolgate') < 0) {
  console.error('usage: node identity.mjs --toolgate PATH [--flood-seconds N]');
  process.exit(2);
}
const floodAt = args.indexOf('--flood-seconds');
const floodSeconds = floodAt >= 0 ? Number(args[floodAt + 1]) : 3;

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-identity-'));
const report = { work };

const lines = (file) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);
const text = (answer) => answer?.answer?.result?.content?.[0]?.text
  ?? answer?.answer?.result?.messages?.[0]?.content?.text
  ?? answer?.answer?.result?.contents?.[0]?.text
  ?? null;
const subOf = (answer) => {
  try {
    return JSON.parse(text(answer)).sub;
  } catch {
    return null;
  }
};
const shown = (answer) => answer.answer?.error ?? answer.answer?.result ?? answer.text;

async function counts(issuer) {
  return (await fetch(`${issuer}/__counts`)).json();
}

function delta(before, after) {
  const out = {};
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0);
    if (d) out[k] = d;
  }
  return out;
}

function rssKb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

async function main() {
  const A = await startJson('node', [path.join(here, 'oidc_provider.mjs'), '--ttl', '40', '--keys-out', path.join(work, 'keys-a.json')]);
  const R = await startJson('node', [path.join(here, 'rogue_as.mjs')]);
  const issuer = A.info.issuer;
  const rogue = R.info.issuer;
  const eachRequests = path.join(work, 'each-requests.log');
  const E = await startJson('node', [path.join(here, 'protected_upstream.mjs'), '--issuer', issuer, '--label', 'each', '--requests-log', eachRequests]);
  const U = await startJson('node', [path.join(here, 'protected_upstream.mjs'), '--issuer', issuer, '--label', 'honest']);
  const L = await startJson('node', [path.join(here, 'protected_upstream.mjs'), '--issuer', issuer, '--label', 'liar', '--authorization-server', rogue]);
  const port = await freePort();
  const gateway = `http://127.0.0.1:${port}/mcp`;
  Object.assign(report, { gateway, issuer, rogue, each: E.info.url, honest: U.info.url, liar: L.info.url });

  const secret = 'toolgate-cc-secret-0123456789';
  const config = path.join(work, 'toolgate.toml');
  const cc = `grant = "client_credentials", client_id = "toolgate-cc", client_secret = "\${TG_CC_SECRET}", scopes = ["mcp"]`;
  const exchange = `grant = "token_exchange", client_id = "toolgate-cc", client_secret = "\${TG_CC_SECRET}", scopes = ["mcp"]`;
  fs.writeFileSync(config, `
[gateway]
mode = "off"

[profiles.user]
tools = ["*"]

[oauth]
resource = "${gateway}"
issuers = ["${issuer}"]
scopes = ["mcp"]
gateway_claims = ["client_id=toolgate-cc"]
default_profile = "user"

[tokens.ops]
env = "TG_OPS_TOKEN"

[tokens.ci]
env = "TG_CI_TOKEN"
profile = "user"

[servers.each]
url = "${E.info.url}"
oauth = { ${exchange} }

[servers.cc]
url = "${U.info.url}"
oauth = { ${cc} }

[servers.person]
url = "${U.info.url}"
oauth = { client_id = "toolgate-login", scopes = ["mcp"] }

[servers.each_liar]
url = "${L.info.url}"
oauth = { ${exchange} }

[servers.cc_liar]
url = "${L.info.url}"
oauth = { ${cc} }

[servers.login_liar]
url = "${L.info.url}"
oauth = { client_id = "toolgate-cc", client_secret = "\${TG_CC_SECRET}", scopes = ["mcp"] }
`);
  const opsToken = 'ops-static-token-0123456789';
  const ciToken = 'ci-static-token-0123456789';
  const env = {
    ...process.env,
    XDG_DATA_HOME: path.join(work, 'data'),
    XDG_CONFIG_HOME: path.join(work, 'config'),
    TG_OPS_TOKEN: opsToken,
    TG_CI_TOKEN: ciToken,
    TG_CC_SECRET: secret,
  };
  const seenByRogue = async () => (await fetch(`${rogue}/__seen`)).json();

  // Logins: an honest one (the control), and one with a client secret whose upstream names R.
  const person = await toolgateLogin(toolgate, 'person', 'carol', env, config);
  const liar = await toolgateLogin(toolgate, 'login_liar', 'carol', env, config);
  report.login = {
    person: { code: person.code, stderr: person.stderr.slice(-600) },
    liar: { code: liar.code, stderr: liar.stderr.slice(-1200), printed_url: liar.printedUrl },
    rogue_saw: await seenByRogue(),
  };

  const serve = (await import('node:child_process')).spawn(toolgate, ['serve', '--config', config, '--http', `127.0.0.1:${port}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(serve);
  let serveLog = '';
  serve.stderr.on('data', (c) => { serveLog += c; });
  serve.stdout.on('data', (c) => { serveLog += c; });
  report.status = await untilSettled(`http://127.0.0.1:${port}/status.json`, opsToken, 6);
  report.rogue_saw_at_start = await seenByRogue();

  // Tokens for the gateway, signed with the provider's real key.
  const keys = () => JSON.parse(fs.readFileSync(path.join(work, 'keys-a.json'), 'utf8')).keys;
  const now = Math.floor(Date.now() / 1000);
  const tokenFor = async (sub, jwk = keys()[0]) =>
    new SignJWT({ iss: issuer, aud: gateway, sub, scope: 'mcp', groups: [], client_id: 'forger' })
      .setProtectedHeader({ alg: 'RS256', kid: jwk.kid, typ: 'at+jwt' })
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .sign(await importJWK(jwk, 'RS256'));

  // Per-user: every kind of request to E, as alice, as bob, and with a static token.
  const asks = (session, token) => {
    let id = 10;
    const ask = (method, params) => rpc(gateway, token, { jsonrpc: '2.0', id: id++, method, params }, session);
    return {
      call: () => ask('tools/call', { name: 'each__whoami', arguments: {} }),
      prompt: () => ask('prompts/get', { name: 'each__whoami', arguments: { topic: 'identity' } }),
      resource: () => ask('resources/read', { uri: 'whoami://each/me' }),
      completion: () => ask('completion/complete', { ref: { type: 'ref/prompt', name: 'each__whoami' }, argument: { name: 'topic', value: 'id' } }),
      listTools: () => ask('tools/list', {}),
      listPrompts: () => ask('prompts/list', {}),
      listResources: () => ask('resources/list', {}),
    };
  };
  report.per_user = {};
  for (const [who, token] of [['alice', await tokenFor('alice')], ['bob', await tokenFor('bob')], ['ci', ciToken]]) {
    const opened = await openSession(gateway, token);
    const a = asks(opened.session, token);
    const before = lines(eachRequests).length;
    await a.listTools();
    await a.listPrompts();
    await a.listResources();
    const call = await a.call();
    const prompt = await a.prompt();
    const resource = await a.resource();
    const completion = await a.completion();
    report.per_user[who] = {
      opened: opened.status,
      call: { sub: subOf(call), shown: shown(call) },
      prompt: { sub: subOf(prompt), shown: shown(prompt) },
      resource: { sub: subOf(resource), shown: shown(resource) },
      completion: { shown: shown(completion) },
      reached_each: lines(eachRequests).slice(before),
    };
  }

  // A refresh after the honest upstream starts naming R too: the refresh token goes where the
  // login got it, and nowhere else.
  await fetch(`${U.info.url.replace(/\/mcp$/, '')}/__lie`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ authorization_server: rogue }),
  });
  const alice = await tokenFor('alice');
  const session = await openSession(gateway, alice);
  await rpc(gateway, alice, { jsonrpc: '2.0', id: 39, method: 'tools/list', params: {} }, session.session);
  const refreshed = await rpc(gateway, alice, { jsonrpc: '2.0', id: 40, method: 'tools/call', params: { name: 'person__whoami', arguments: {} } }, session.session);
  report.refresh = { sub: subOf(refreshed), shown: shown(refreshed), rogue_saw: await seenByRogue() };

  // No work for strangers.
  const garbage = b64url('not a signature');
  const unsigned = (claims, header) => `${b64url(JSON.stringify({ alg: 'RS256', typ: 'at+jwt', ...header }))}.${b64url(JSON.stringify(claims))}.${garbage}`;
  const claims = (iss) => ({ iss, aud: gateway, sub: 'mallory', scope: 'mcp', exp: now + 600, iat: now });
  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'stranger', version: '1' } } };
  const knownKid = keys()[0].kid;
  // One real token first, so the gateway holds the keys; then 120 spellings of the issuer.
  await rpc(gateway, await tokenFor('alice'), initialize);
  let before = await counts(issuer);
  const spellings = [];
  for (let k = 1; k <= 120; k++) spellings.push(`${issuer}${'/'.repeat(k)}`);
  const spelled = await Promise.all(spellings.map((iss) => rpc(gateway, unsigned(claims(iss), { kid: knownKid }), initialize)));
  report.spellings = { statuses: [...new Set(spelled.map((s) => s.status))], provider_got: delta(before, await counts(issuer)) };

  // Made-up key ids beside a real token signed with a key the provider rotated to a moment ago.
  await fetch(`${issuer}/__rotate`, { method: 'POST' });
  await new Promise((r) => setTimeout(r, 100));
  const rotated = await tokenFor('alice', keys()[0]);
  before = await counts(issuer);
  const fakes = [];
  const patience = 20000;
  const given = (answer) => answer.then((a) => a, () => ({ status: 'gave up' }));
  for (let i = 0; i < 10; i++) fakes.push(given(rpc(gateway, unsigned(claims(issuer), { kid: `made-up-${i}` }), initialize, null, patience)));
  const started = Date.now();
  const real = await given(rpc(gateway, rotated, initialize, null, patience));
  const realMs = Date.now() - started;
  const fakeAnswers = await Promise.all(fakes);
  report.made_up_kids = {
    real: real.status,
    real_ms: realMs,
    fakes: [...new Set(fakeAnswers.map((f) => f.status))],
    provider_got: delta(before, await counts(issuer)),
  };

  // A flood: unsigned tokens, a third each with made-up key ids, odd spellings of the issuer
  // and unknown issuers, at 1,000 a second for `floodSeconds`; twice, so that what stays after
  // the first shows apart from what each flood adds.
  const flood = async (round) => {
    const rssBefore = rssKb(serve.pid);
    const providerBefore = await counts(issuer);
    const floodStarted = Date.now();
    const inFlight = [];
    let sent = 0;
    for (let second = 0; second < floodSeconds; second++) {
      const tick = Date.now();
      for (let i = 0; i < 1000; i++) {
        const n = sent++;
        const kind = n % 3;
        const token = kind === 0
          ? unsigned(claims(issuer), { kid: `flood-${round}-${n}` })
          : kind === 1
            ? unsigned(claims(`${issuer}${'/'.repeat(1 + (n % 500))}`), { kid: `flood-${round}-${n}` })
            : unsigned(claims(`http://stranger-${round}-${n}.example`), { kid: knownKid });
        inFlight.push(rpc(gateway, token, initialize, null, 20000).then((r) => r.status, () => 'gave up'));
        if (i % 100 === 99) await new Promise((r) => setImmediate(r));
      }
      const left = 1000 - (Date.now() - tick);
      if (left > 0) await new Promise((r) => setTimeout(r, left));
    }
    const statuses = await Promise.all(inFlight);
    const floodMs = Date.now() - floodStarted;
    const byStatus = {};
    for (const s of statuses) byStatus[s] = (byStatus[s] ?? 0) + 1;
    await new Promise((r) => setTimeout(r, 1000));
    return {
      tokens: sent,
      seconds: floodMs / 1000,
      statuses: byStatus,
      provider_got: delta(providerBefore, await counts(issuer)),
      rss_kb_before: rssBefore,
      rss_kb_after: rssKb(serve.pid),
    };
  };
  report.flood = [await flood(1), await flood(2)];
  // And the legitimate path still works after it.
  report.after_flood = (await rpc(gateway, await tokenFor('bob', keys()[0]), initialize)).status;

  report.log_leaks = [secret, ciToken, opsToken].filter((s) => serveLog.includes(s)).length;
  report.log_tail = serveLog.slice(-2000);
}

run(main, report, work);
