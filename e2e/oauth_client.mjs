// The TypeScript MCP SDK's own OAuth client (@modelcontextprotocol/client 2.4.0: its
// StreamableHTTPClientTransport with an OAuthClientProvider) going through the real flow against
// an MCP server protected by an OAuth authorization server (e.g. protected_upstream.mjs behind
// oidc_provider.mjs, or toolgate in front of them): 401 -> protected-resource metadata ->
// authorization-server metadata -> dynamic client registration -> authorization request with
// PKCE S256 and `resource` -> headless login and consent (oidc_login.mjs) -> the redirect reaches
// this script's own loopback listener -> finishAuth (code + iss checked) -> connect again.
//
// Usage:
//   node oauth_client.mjs SERVER_URL USERNAME [TOOL [JSON_ARGS]]
//
//   SERVER_URL  the MCP endpoint, e.g. http://127.0.0.1:PORT/mcp
//   USERNAME    who signs in at the provider's login page (oidc_provider.mjs: alice, bob, ...)
//   TOOL        a tool to call after tools/list; JSON_ARGS its arguments (default {})
//   Environment: OAUTH_CLIENT_ID=mcp-client uses that pre-registered public client instead of
//   dynamic registration.
//
// Prints ONE JSON line to stdout:
//   {"tools":[NAMES...], "call": CALL_RESULT_OR_NULL, "token_aud": AUD, "sub": SUB}
// where token_aud and sub are read (not verified) from the JWT access token it obtained.
// Exits non-zero, saying what went wrong, on any failure.

import * as crypto from 'node:crypto';
import * as http from 'node:http';

import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';

import { login } from './oidc_login.mjs';

// The SDK logs its warnings with console.warn (stderr); keep stdout for the one JSON line.
console.log = (...args) => console.error(...args);
console.info = (...args) => console.error(...args);

function fail(message) {
  console.error(`oauth_client: ${message}`);
  process.exit(1);
}

const [serverUrlArg, username, tool, jsonArgs] = process.argv.slice(2);
if (!serverUrlArg || !username) {
  console.error('usage: node oauth_client.mjs SERVER_URL USERNAME [TOOL [JSON_ARGS]]');
  process.exit(2);
}
let serverUrl;
try {
  serverUrl = new URL(serverUrlArg);
} catch {
  fail(`SERVER_URL is not a URL: ${serverUrlArg}`);
}
let toolArgs = {};
if (jsonArgs !== undefined) {
  try {
    toolArgs = JSON.parse(jsonArgs);
  } catch (err) {
    fail(`JSON_ARGS is not JSON: ${err.message}`);
  }
  if (toolArgs === null || typeof toolArgs !== 'object' || Array.isArray(toolArgs)) fail('JSON_ARGS must be a JSON object');
}

// ---------------------------------------------------------------------------------------------
// The loopback listener the authorization server redirects to.

function startCallbackListener() {
  return new Promise((resolve, reject) => {
    const received = [];
    const server = http.createServer((req, res) => {
      const url = new URL(req.url, 'http://127.0.0.1');
      if (url.pathname !== '/callback') {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not found\n');
        return;
      }
      received.push(url.searchParams);
      const ok = url.searchParams.has('code');
      res.writeHead(ok ? 200 : 400, { 'content-type': 'text/plain' });
      res.end(ok ? 'Authorization complete; you may close this window.\n' : `Authorization failed: ${url.searchParams.get('error') ?? 'no code'}\n`);
    });
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => resolve({ server, port: server.address().port, received }));
  });
}

// ---------------------------------------------------------------------------------------------
// An in-memory OAuthClientProvider

class InMemoryOAuthProvider {
  constructor(port, user, received) {
    this.port = port;
    this.user = user;
    this.received = received;
    this.clientInfo = process.env.OAUTH_CLIENT_ID ? { client_id: process.env.OAUTH_CLIENT_ID } : undefined;
    this.savedTokens = undefined;
    this.verifier = undefined;
    this.discovery = undefined;
    this.expectedState = undefined;
    this.callbackParams = undefined;
  }

  get redirectUrl() {
    return `http://127.0.0.1:${this.port}/callback`;
  }

  get clientMetadata() {
    return {
      client_name: 'toolgate e2e oauth_client.mjs',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    };
  }

  state() {
    this.expectedState = crypto.randomBytes(16).toString('base64url');
    return this.expectedState;
  }

  clientInformation() {
    return this.clientInfo;
  }

  saveClientInformation(info) {
    if (info.client_id !== this.clientInfo?.client_id) console.error(`oauth_client: client_id ${info.client_id}`);
    this.clientInfo = info;
  }

  tokens() {
    return this.savedTokens;
  }

  saveTokens(tokens) {
    this.savedTokens = tokens;
  }

  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }

  codeVerifier() {
    if (!this.verifier) throw new Error('no PKCE code verifier saved');
    return this.verifier;
  }

  saveDiscoveryState(state) {
    this.discovery = state;
  }

  discoveryState() {
    return this.discovery;
  }

  invalidateCredentials(scope) {
    if (scope === 'all' || scope === 'client') this.clientInfo = undefined;
    if (scope === 'all' || scope === 'tokens') this.savedTokens = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = undefined;
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
  }

  async redirectToAuthorization(authorizationUrl) {
    console.error(`oauth_client: authorizing at ${authorizationUrl.origin}${authorizationUrl.pathname} as ${this.user}`);
    const finalUrl = await login(authorizationUrl.href, this.user);
    // Follow the final redirect as the browser would: it reaches our own loopback listener.
    const before = this.received.length;
    let response;
    try {
      response = await fetch(finalUrl, { redirect: 'manual' });
      await response.text();
    } catch (err) {
      throw new Error(`the authorization redirect ${finalUrl} did not reach this client's listener: ${err.cause?.message || err.message}`);
    }
    if (this.received.length === before) throw new Error(`the authorization redirect went elsewhere: ${finalUrl}`);
    const params = this.received[this.received.length - 1];
    if (params.get('error')) throw new Error(`authorization failed: ${params.get('error')}: ${params.get('error_description') ?? ''}`);
    if (!params.get('code')) throw new Error(`the authorization redirect carries no code: ${finalUrl}`);
    if (this.expectedState !== undefined && params.get('state') !== this.expectedState) {
      throw new Error(`state mismatch in the authorization redirect: sent ${this.expectedState}, got ${params.get('state')}`);
    }
    this.callbackParams = params;
  }
}

function jwtPayload(token) {
  const parts = String(token).split('.');
  if (parts.length !== 3) return undefined;
  try {
    return JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const { server: listener, port, received } = await startCallbackListener();
  const provider = new InMemoryOAuthProvider(port, username, received);
  const clientInfo = { name: 'toolgate-e2e-oauth-client', version: '1.0.0' };

  let transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
  let client = new Client(clientInfo);
  try {
    await client.connect(transport);
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) {
      throw new Error(`connecting to ${serverUrl.href} failed: ${err.message}${err.cause ? ` (cause: ${err.cause.message ?? err.cause})` : ''}`);
    }
    if (!provider.callbackParams) throw new Error(`the server refused us and no authorization took place: ${err.message}`);
    // As the SDK documents: finish the authorization on the transport that started it, then
    // connect again with a new transport sharing the provider.
    await transport.finishAuth(provider.callbackParams);
    await client.close().catch(() => {});
    transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
    client = new Client(clientInfo);
    await client.connect(transport);
  }

  const { tools } = await client.listTools();
  let call = null;
  if (tool) call = await client.callTool({ name: tool, arguments: toolArgs });

  const accessToken = provider.savedTokens?.access_token;
  const payload = accessToken ? jwtPayload(accessToken) : undefined;
  process.stdout.write(`${JSON.stringify({
    tools: tools.map((t) => t.name),
    call,
    token_aud: payload?.aud ?? null,
    sub: payload?.sub ?? null,
  })}\n`);

  await client.close().catch(() => {});
  listener.close();
}

try {
  await main();
  process.exit(0);
} catch (err) {
  fail(`${err.name && err.name !== 'Error' ? `${err.name}: ` : ''}${err.message}${err.cause ? ` (cause: ${err.cause.message ?? err.cause})` : ''}`);
}
