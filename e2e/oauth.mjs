// OAuth 2.1 on both sides of a real `toolgate serve --http`, with a real OpenID provider
// (oidc_provider.mjs, the `oidc-provider` package) and a real MCP server protected by the
// official SDK's bearer-token middleware (protected_upstream.mjs). Stages every check and
// prints what it saw as one JSON object; crates/toolgate-cli/tests/oauth.rs judges it.
//
// Usage: node oauth.mjs --toolgate PATH_TO_TOOLGATE
//
// What runs:
// - provider A (the team's issuer) and provider B (another issuer), both on loopback;
// - the protected upstream, trusting A, logging who made each call;
// - `toolgate login person` and `toolgate login dyn`, each driven headlessly (oidc_login.mjs):
//   `person` with a pre-registered public client, `dyn` registering itself (RFC 7591);
// - `toolgate serve` with [oauth] (A's tokens for this gateway's URL; groups map to profiles;
//   the gateway's own client-credentials token gets the gateway's subject), a static token
//   beside it, and four OAuth upstreams, all the same protected server: `cc` (client
//   credentials), `person` and `dyn` (the logins) and `each` (token exchange, per user).
// Access tokens live 40 s, less than the minute before expiry at which toolgate renews one,
// so every upstream call through a login refreshes it (and the provider rotates the refresh
// token each time).

import { spawn } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { SignJWT, generateKeyPair, importJWK } from 'jose';

import { login } from './oidc_login.mjs';
import {
  b64url, children, freePort, headerOf, initialize, openSession, rpc, run, startJson, toolgateLogin as loginAs,
  untilSettled,
} from './oauth_lab.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const toolgate = args[args.indexOf('--toolgate') + 1];
if (!toolgate || args.indexOf('--toolgate') < 0) {
  console.error('usage: node oauth.mjs --toolgate PATH');
  process.exit(2);
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-oauth-'));
const report = { work };

async function clientCredentials(issuer, resource) {
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from('toolgate-cc:toolgate-cc-secret-0123456789').toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope: 'mcp' }),
  });
  const body = await response.json();
  if (!body.access_token) throw new Error(`client credentials at ${issuer}: ${JSON.stringify(body)}`);
  return body.access_token;
}

/** A person's tokens for `resource` through the pre-registered public client `mcp-client`. */
async function personTokens(issuer, resource, username) {
  const verifier = b64url(crypto.randomBytes(32));
  const challenge = b64url(crypto.createHash('sha256').update(verifier).digest());
  const redirect = 'http://127.0.0.1:9/callback';
  const url = new URL(`${issuer}/auth`);
  for (const [k, v] of Object.entries({
    client_id: 'mcp-client', response_type: 'code', redirect_uri: redirect, scope: 'mcp offline_access',
    state: 's', code_challenge: challenge, code_challenge_method: 'S256', resource,
  })) url.searchParams.set(k, v);
  const back = new URL(await login(url.toString(), username));
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code', client_id: 'mcp-client', code: back.searchParams.get('code'),
      redirect_uri: redirect, code_verifier: verifier, resource,
    }),
  });
  const body = await response.json();
  if (!body.access_token) throw new Error(`code exchange: ${JSON.stringify(body)}`);
  return body;
}

async function refresh(issuer, refreshToken) {
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', client_id: 'mcp-client', refresh_token: refreshToken }),
  });
  const body = await response.json();
  if (!body.access_token) throw new Error(`refresh: ${JSON.stringify(body)}`);
  return body;
}

const toolgateLogin = (name, username, env, config) => loginAs(toolgate, name, username, env, config);

async function main() {
  const A = await startJson('node', [path.join(here, 'oidc_provider.mjs'), '--ttl', '40', '--keys-out', path.join(work, 'keys-a.json')]);
  const B = await startJson('node', [path.join(here, 'oidc_provider.mjs'), '--ttl', '40']);
  const issuer = A.info.issuer;
  const callsLog = path.join(work, 'calls.log');
  const up = await startJson('node', [path.join(here, 'protected_upstream.mjs'), '--issuer', issuer, '--log', callsLog]);
  const upstreamUrl = up.info.url;
  const port = await freePort();
  const gateway = `http://127.0.0.1:${port}/mcp`;
  report.gateway = gateway;
  report.issuer = issuer;
  report.upstream = upstreamUrl;

  const config = path.join(work, 'toolgate.toml');
  fs.writeFileSync(config, `
[gateway]
mode = "off"

[profiles.reader]
tools = ["cc__whoami", "each__whoami"]

[profiles.writer]
tools = ["cc__echo", "person__*", "dyn__*", "each__*"]

[oauth]
resource = "${gateway}"
issuers = ["${issuer}"]
scopes = ["mcp"]
gateway_claims = ["client_id=toolgate-cc"]
profiles = { reader = ["groups=readers"], writer = ["groups=writers"] }

[tokens.ci]
env = "TG_CI_TOKEN"
profile = "reader"

[tokens.ops]
env = "TG_OPS_TOKEN"

[servers.cc]
url = "${upstreamUrl}"
oauth = { grant = "client_credentials", client_id = "toolgate-cc", client_secret = "\${TG_CC_SECRET}", scopes = ["mcp"] }

[servers.person]
url = "${upstreamUrl}"
oauth = { client_id = "toolgate-login", scopes = ["mcp"] }

[servers.dyn]
url = "${upstreamUrl}"
oauth = { scopes = ["mcp"] }

[servers.each]
url = "${upstreamUrl}"
oauth = { grant = "token_exchange", client_id = "toolgate-cc", client_secret = "\${TG_CC_SECRET}", scopes = ["mcp"] }
`);
  const ciToken = 'ci-static-token-0123456789';
  const opsToken = 'ops-static-token-0123456789';
  const env = {
    ...process.env,
    XDG_DATA_HOME: path.join(work, 'data'),
    XDG_CONFIG_HOME: path.join(work, 'config'),
    TG_CI_TOKEN: ciToken,
    TG_OPS_TOKEN: opsToken,
    TG_CC_SECRET: 'toolgate-cc-secret-0123456789',
  };

  // toolgate login, twice, driven as a person in a browser would.
  report.login = {};
  for (const [name, user] of [['person', 'carol'], ['dyn', 'dave']]) {
    const result = await toolgateLogin(name, user, env, config);
    const file = path.join(work, 'data', 'toolgate', 'oauth', `${name}.token`);
    const sealed = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    report.login[name] = {
      code: result.code,
      stdout: result.stdout.trim(),
      stderr: result.stderr.slice(-800),
      drove: result.drove,
      sealed: sealed.length > 0,
      // A token in the clear: a JWT's header and payload (`eyJ…` twice, joined by a dot, which
      // base64 never writes), or a token response's words (`access_token` has an underscore,
      // which standard base64 never writes). `eyJ` alone turns up in sealed base64 by chance.
      plaintext_visible: /eyJ[\w-]*\.eyJ|access_token|refresh/.test(sealed),
      key_file: fs.existsSync(path.join(work, 'config', 'toolgate', 'oauth.key')),
    };
  }

  const serve = spawn(toolgate, ['serve', '--config', config, '--http', `127.0.0.1:${port}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(serve);
  let serveLog = '';
  serve.stderr.on('data', (c) => { serveLog += c; });
  serve.stdout.on('data', (c) => { serveLog += c; });
  // Ready when every upstream is.
  report.status = await untilSettled(`http://127.0.0.1:${port}/status.json`, opsToken, 4);

  // A client without a token is pointed to the metadata, which names the provider.
  const bare = await rpc(gateway, null, initialize);
  const metadataUrl = /resource_metadata="([^"]+)"/.exec(bare.challenge ?? '')?.[1] ?? null;
  report.unauthenticated = { status: bare.status, challenge: bare.challenge, metadata_url: metadataUrl };
  if (metadataUrl) {
    const response = await fetch(metadataUrl);
    report.metadata = { status: response.status, body: await response.json() };
  }

  // The TypeScript SDK's OAuth client through the real flow, as two people.
  const sdk = async (user, tool) => {
    const child = spawn('node', [path.join(here, 'oauth_client.mjs'), gateway, user, tool], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => { out += c; });
    child.stderr.on('data', (c) => { err += c; });
    const code = await new Promise((r) => child.on('exit', r));
    try {
      return { code, ...JSON.parse(out.trim().split('\n').pop()) };
    } catch {
      return { code, stdout: out, stderr: err.slice(-1500) };
    }
  };
  report.sdk = {
    alice_cc: await sdk('alice', 'cc__whoami'),
    alice_each: await sdk('alice', 'each__whoami'),
    bob_person: await sdk('bob', 'person__whoami'),
    bob_dyn: await sdk('bob', 'dyn__whoami'),
    bob_each: await sdk('bob', 'each__whoami'),
  };

  // Tokens that must be refused, each beside a control that must pass.
  const keys = JSON.parse(fs.readFileSync(path.join(work, 'keys-a.json'), 'utf8')).keys;
  const realKey = await importJWK(keys[0], 'RS256');
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: issuer, aud: gateway, sub: 'alice', scope: 'mcp', groups: ['readers'], client_id: 'forger' };
  const sign = (key, kid, extra) =>
    new SignJWT({ ...claims, ...extra }).setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' }).sign(key);
  const { privateKey: strangerKey } = await generateKeyPair('RS256', { extractable: true });
  const tokens = {
    control_signed_with_the_real_key: await sign(realKey, keys[0].kid, { iat: now, exp: now + 300 }),
    other_audience: await clientCredentials(issuer, upstreamUrl),
    expired: await sign(realKey, keys[0].kid, { iat: now - 7200, exp: now - 3600 }),
    unknown_key: await sign(strangerKey, 'stranger-key', { iat: now, exp: now + 300 }),
    other_issuer: await clientCredentials(B.info.issuer, gateway),
    no_scope: await sign(realKey, keys[0].kid, { iat: now, exp: now + 300, scope: 'openid' }),
    unmapped: await sign(realKey, keys[0].kid, { iat: now, exp: now + 300, groups: ['visitors'] }),
  };
  report.tokens = {};
  for (const [name, token] of Object.entries(tokens)) {
    const answer = await rpc(gateway, token, initialize);
    report.tokens[name] = { status: answer.status, challenge: answer.challenge, message: answer.answer?.error?.message ?? null };
  }

  // A key rotation at the provider: a token signed with the new key works at once.
  const before = await clientCredentials(issuer, gateway);
  const beforeAnswer = await rpc(gateway, before, initialize);
  const rotated = await (await fetch(`${issuer}/__rotate`, { method: 'POST' })).json();
  const after = await clientCredentials(issuer, gateway);
  const afterAnswer = await rpc(gateway, after, initialize);
  report.rotation = {
    kid_before: headerOf(before).kid, kid_after: headerOf(after).kid, rotated_to: rotated.kid,
    before: beforeAnswer.status, after: afterAnswer.status, after_message: afterAnswer.answer?.error?.message ?? null,
  };

  // A session belongs to an identity: alice's refreshed token keeps it, bob's token and the
  // static token cannot use it.
  const alice = await personTokens(issuer, gateway, 'alice');
  const bob = await personTokens(issuer, gateway, 'bob');
  const opened = await openSession(gateway, alice.access_token);
  const renewed = await refresh(issuer, alice.refresh_token);
  const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
  const withRefreshed = await rpc(gateway, renewed.access_token, list, opened.session);
  const withBob = await rpc(gateway, bob.access_token, list, opened.session);
  const withStatic = await rpc(gateway, ciToken, list, opened.session);
  report.session = {
    opened: opened.status,
    tokens_differ: renewed.access_token !== alice.access_token,
    refreshed: withRefreshed.status,
    refreshed_tools: withRefreshed.answer?.result?.tools?.map((t) => t.name) ?? null,
    bob: withBob.status,
    bob_message: withBob.answer?.error?.message ?? withBob.text,
    static_token: withStatic.status,
  };

  // Per-user exchange refuses a caller without an OAuth identity, and sends nothing.
  const callsBefore = fs.existsSync(callsLog) ? fs.readFileSync(callsLog, 'utf8').split('\n').filter(Boolean).length : 0;
  const ci = await openSession(gateway, ciToken);
  const ciList = await rpc(gateway, ciToken, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, ci.session);
  const ciCall = await rpc(gateway, ciToken, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'each__whoami', arguments: {} } }, ci.session);
  const ciCc = await rpc(gateway, ciToken, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'cc__whoami', arguments: {} } }, ci.session);
  const callsAfter = fs.readFileSync(callsLog, 'utf8').split('\n').filter(Boolean);
  report.static_caller = {
    listed: ciList.answer?.result?.tools?.map((t) => t.name) ?? ciList.text,
    each: ciCall.answer?.result ?? ciCall.answer?.error ?? ciCall.text,
    cc: ciCc.answer?.result ?? ciCc.answer?.error ?? ciCc.text,
    upstream_calls_since: callsAfter.slice(callsBefore).map((l) => JSON.parse(l)),
  };

  // The login's tokens are refreshed (each call, as they live less than a minute) and sealed
  // again; a call still works after the access token the login got has expired.
  const sealedBefore = fs.readFileSync(path.join(work, 'data', 'toolgate', 'oauth', 'person.token'), 'utf8');
  await new Promise((r) => setTimeout(r, 1500));
  const bobAgain = await personTokens(issuer, gateway, 'bob');
  const bobSession = await openSession(gateway, bobAgain.access_token);
  await rpc(gateway, bobAgain.access_token, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, bobSession.session);
  const again = await rpc(gateway, bobAgain.access_token, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'person__whoami', arguments: {} } }, bobSession.session);
  const sealedAfter = fs.readFileSync(path.join(work, 'data', 'toolgate', 'oauth', 'person.token'), 'utf8');
  report.refresh = {
    call: again.answer?.result ?? again.answer?.error ?? again.text,
    resealed: sealedBefore !== sealedAfter,
  };

  report.upstream_calls = fs.readFileSync(callsLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  // Nothing secret in the gateway's log: no access or refresh token, no client secret.
  const secrets = [alice.access_token, bob.access_token, 'toolgate-cc-secret-0123456789', ciToken];
  report.log_leaks = secrets.filter((s) => serveLog.includes(s)).length;
  report.log_tail = serveLog.slice(-3000);
}

run(main, report, work);
