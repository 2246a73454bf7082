// An MCP server (streamable HTTP, stateless: a new server + transport per request) protected by
// the OFFICIAL TypeScript SDK's bearer-token middleware (@modelcontextprotocol/sdk 1.32.2,
// requireBearerAuth), with a JWT verifier written with `jose` against an OpenID provider such as
// oidc_provider.mjs. toolgate's end-to-end tests put it behind the gateway.
//
// Usage:
//   node protected_upstream.mjs --issuer ISSUER [--port N] [--log FILE] [--jwks-cooldown SECONDS]
//                               [--authorization-server URL] [--label NAME] [--requests-log FILE]
//
//   --issuer ISSUER          the authorization server (its /.well-known/openid-configuration
//                            gives the jwks_uri); tokens must carry iss = ISSUER.
//   --port N                 TCP port on 127.0.0.1; 0 (the default) picks a free one.
//   --log FILE               every authorized tool call appends one JSON line
//                            {"tool":..., "sub":..., "client_id":...} to FILE.
//   --jwks-cooldown SECONDS  how long after a JWKS fetch a token with an unknown kid may NOT
//                            trigger a refetch (jose's cooldownDuration). Default 0, so a key
//                            rotation at the provider is picked up at once; jose's own default
//                            is 30.
//   --authorization-server URL  the authorization server its protected-resource metadata names
//                            (default ISSUER): another one makes it an upstream that lies about
//                            where its tokens come from. POST /__lie {"authorization_server": URL}
//                            changes it while it runs.
//   --label NAME             its resource is whoami://NAME/me (default "upstream"), so that two
//                            of these behind one gateway list different URIs.
//   --requests-log FILE      every authorized JSON-RPC request appends one JSON line
//                            {"method", "target", "sub"} to FILE (target: the tool, prompt or URI).
//
// When listening it prints one JSON line to stdout:
//   {"url":"http://127.0.0.1:PORT/mcp","port":PORT}
// Every refused request (401) is logged to stderr.
//
// What it serves:
//   POST /mcp  MCP over streamable HTTP (GET/DELETE answer 405: stateless), behind
//              requireBearerAuth: the token must be an RS256 JWT signed by a key in the issuer's
//              JWKS, with iss = ISSUER, aud = http://127.0.0.1:PORT/mcp, not expired. A refusal
//              is 401 with WWW-Authenticate: Bearer error="invalid_token", error_description=
//              "...", resource_metadata="http://127.0.0.1:PORT/.well-known/oauth-protected-resource/mcp"
//   GET /.well-known/oauth-protected-resource/mcp and /.well-known/oauth-protected-resource:
//              RFC 9728 metadata {resource, authorization_servers: [ISSUER],
//              scopes_supported: ["mcp"], bearer_methods_supported: ["header"]}
// Tools:
//   whoami  (no arguments) -> text JSON {"sub", "client_id", "aud"} of the calling token
//   echo    {text: string} -> the text
// Prompt `whoami` {topic} (topic completable): a user message with the caller's JSON as above.
// Resource whoami://NAME/me: the caller's JSON as above.

import * as fs from 'node:fs';

import express from 'express';
import { z } from 'zod';
import { createRemoteJWKSet, jwtVerify, errors as joseErrors } from 'jose';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidTokenError, ServerError } from '@modelcontextprotocol/sdk/server/auth/errors.js';

const USAGE = 'usage: node protected_upstream.mjs --issuer ISSUER [--port N] [--log FILE] [--jwks-cooldown SECONDS] [--authorization-server URL] [--label NAME] [--requests-log FILE]';

function fail(message) {
  console.error(`protected_upstream: ${message}`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { issuer: undefined, port: 0, log: undefined, cooldown: 0, authorizationServer: undefined, label: 'upstream', requestsLog: undefined };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(`${arg} needs a value (${USAGE})`);
      i += 1;
      return argv[i];
    };
    switch (arg) {
      case '--issuer':
        opts.issuer = value();
        break;
      case '--port': {
        const v = value();
        opts.port = Number(v);
        if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) fail(`--port: not a port number: ${v}`);
        break;
      }
      case '--log':
        opts.log = value();
        break;
      case '--authorization-server':
        opts.authorizationServer = value();
        break;
      case '--label':
        opts.label = value();
        break;
      case '--requests-log':
        opts.requestsLog = value();
        break;
      case '--jwks-cooldown': {
        const v = value();
        opts.cooldown = Number(v);
        if (!Number.isFinite(opts.cooldown) || opts.cooldown < 0) fail(`--jwks-cooldown: not a number of seconds: ${v}`);
        break;
      }
      case '-h':
      case '--help':
        console.error(USAGE);
        process.exit(0);
        break;
      default:
        fail(`unknown argument: ${arg} (${USAGE})`);
    }
  }
  if (!opts.issuer) fail(`--issuer is required (${USAGE})`);
  if (!URL.canParse(opts.issuer)) {
    fail(`--issuer is not a URL: ${opts.issuer}`);
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));

// ---------------------------------------------------------------------------------------------
// Token verification

let jwksPromise; // resolves to jose's remote JWKS function; reset on failure so it is retried

async function issuerJwks() {
  if (!jwksPromise) {
    jwksPromise = (async () => {
      const discovery = `${opts.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
      let response;
      try {
        response = await fetch(discovery, { headers: { accept: 'application/json' } });
      } catch (err) {
        throw new Error(`cannot fetch ${discovery}: ${err.cause?.message || err.message}`);
      }
      if (!response.ok) throw new Error(`${discovery} answered ${response.status}`);
      const metadata = await response.json();
      if (metadata.issuer !== opts.issuer) {
        throw new Error(`${discovery} names issuer ${metadata.issuer}, not ${opts.issuer}`);
      }
      if (!metadata.jwks_uri) throw new Error(`${discovery} has no jwks_uri`);
      console.error(`protected_upstream: issuer ${opts.issuer}, jwks_uri ${metadata.jwks_uri}`);
      return createRemoteJWKSet(new URL(metadata.jwks_uri), { cooldownDuration: opts.cooldown * 1000 });
    })();
    jwksPromise.catch(() => { jwksPromise = undefined; });
  }
  return jwksPromise;
}

// The SDK puts the message, unescaped, inside a quoted WWW-Authenticate parameter: keep it free
// of double quotes and backslashes so the header stays well-formed.
function headerSafe(message) {
  return message.replace(/["\\]/g, "'");
}

function makeVerifier(resourceUrl) {
  return {
    async verifyAccessToken(token) {
      let jwks;
      try {
        jwks = await issuerJwks();
      } catch (err) {
        throw new ServerError(`cannot load the issuer's keys: ${err.message}`);
      }
      let payload;
      try {
        ({ payload } = await jwtVerify(token, jwks, {
          issuer: opts.issuer,
          audience: resourceUrl,
          algorithms: ['RS256'],
          requiredClaims: ['exp', 'sub'],
        }));
      } catch (err) {
        if (err instanceof joseErrors.JOSEError) {
          throw new InvalidTokenError(headerSafe(`${err.code}: ${err.message}`));
        }
        throw new InvalidTokenError(headerSafe(`token rejected: ${err.message}`));
      }
      const aud = Array.isArray(payload.aud) ? payload.aud.find((a) => a === resourceUrl) ?? payload.aud[0] : payload.aud;
      return {
        token,
        clientId: payload.client_id ?? payload.azp ?? payload.sub,
        scopes: typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [],
        expiresAt: payload.exp,
        resource: new URL(aud),
        extra: { sub: payload.sub, aud },
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The MCP server

function logCall(tool, authInfo) {
  if (!opts.log) return;
  const line = JSON.stringify({ tool, sub: authInfo?.extra?.sub ?? null, client_id: authInfo?.clientId ?? null });
  try {
    fs.appendFileSync(opts.log, `${line}\n`);
  } catch (err) {
    console.error(`protected_upstream: cannot append to --log file ${opts.log}: ${err.message}`);
  }
}

function logRequest(body, authInfo) {
  if (!opts.requestsLog) return;
  for (const message of Array.isArray(body) ? body : [body]) {
    if (!message || typeof message.method !== 'string') continue;
    const p = message.params ?? {};
    const target = p.name ?? p.uri ?? p.ref?.name ?? p.ref?.uri ?? null;
    const line = JSON.stringify({ method: message.method, target, sub: authInfo?.extra?.sub ?? null });
    try {
      fs.appendFileSync(opts.requestsLog, `${line}\n`);
    } catch (err) {
      console.error(`protected_upstream: cannot append to --requests-log file ${opts.requestsLog}: ${err.message}`);
    }
  }
}

function whoOf(authInfo) {
  return { sub: authInfo?.extra?.sub ?? null, client_id: authInfo?.clientId ?? null, aud: authInfo?.extra?.aud ?? null };
}

function buildServer() {
  const server = new McpServer({ name: 'protected-upstream', version: '1.0.0' });
  server.registerPrompt(
    'whoami',
    { description: 'Who the bearer token that asked belongs to.', argsSchema: { topic: completable(z.string(), (value) => ['identity', 'tokens'].filter((t) => t.startsWith(value))) } },
    async (_args, extra) => ({ messages: [{ role: 'user', content: { type: 'text', text: JSON.stringify(whoOf(extra.authInfo)) } }] }),
  );
  server.registerResource(
    'whoami',
    `whoami://${opts.label}/me`,
    { description: 'Who the bearer token that read it belongs to.', mimeType: 'application/json' },
    async (uri, extra) => ({ contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(whoOf(extra.authInfo)) }] }),
  );
  server.registerTool(
    'whoami',
    { description: 'Who the bearer token that made this call belongs to: {"sub","client_id","aud"}.' },
    async (extra) => {
      const authInfo = extra.authInfo;
      logCall('whoami', authInfo);
      const who = { sub: authInfo?.extra?.sub ?? null, client_id: authInfo?.clientId ?? null, aud: authInfo?.extra?.aud ?? null };
      return { content: [{ type: 'text', text: JSON.stringify(who) }] };
    },
  );
  server.registerTool(
    'echo',
    { description: 'Returns the text it is given.', inputSchema: { text: z.string() } },
    async ({ text }, extra) => {
      logCall('echo', extra.authInfo);
      return { content: [{ type: 'text', text }] };
    },
  );
  return server;
}

// ---------------------------------------------------------------------------------------------
// HTTP

const app = express();
const httpServer = app.listen(opts.port, '127.0.0.1');

httpServer.on('error', (err) => fail(`cannot listen on 127.0.0.1:${opts.port}: ${err.message}`));

httpServer.on('listening', () => {
  const { port } = httpServer.address();
  const origin = `http://127.0.0.1:${port}`;
  const resourceUrl = `${origin}/mcp`;
  const resourceMetadataUrl = `${origin}/.well-known/oauth-protected-resource/mcp`;
  const metadata = {
    resource: resourceUrl,
    authorization_servers: [opts.authorizationServer ?? opts.issuer],
    scopes_supported: ['mcp'],
    bearer_methods_supported: ['header'],
  };

  const serveMetadata = (req, res) => {
    res.set('cache-control', 'no-store');
    res.set('access-control-allow-origin', '*');
    res.json(metadata);
  };
  app.get('/.well-known/oauth-protected-resource/mcp', serveMetadata);
  app.get('/.well-known/oauth-protected-resource', serveMetadata);
  app.post('/__lie', express.json(), (req, res) => {
    metadata.authorization_servers = [req.body.authorization_server];
    console.error(`protected_upstream: now names ${req.body.authorization_server} as its authorization server`);
    res.json(metadata);
  });

  const logRefusals = (req, res, next) => {
    res.on('finish', () => {
      if (res.statusCode === 401) {
        const why = res.get('www-authenticate') || '(no WWW-Authenticate)';
        const had = req.headers.authorization ? 'with a token' : 'without a token';
        console.error(`protected_upstream: refused ${req.method} ${req.originalUrl} ${had}: 401 ${why}`);
      }
    });
    next();
  };

  const bearer = requireBearerAuth({
    verifier: makeVerifier(resourceUrl),
    resourceMetadataUrl,
    expectedResource: new URL(resourceUrl),
  });

  app.post('/mcp', logRefusals, bearer, express.json({ limit: '4mb' }), async (req, res) => {
    const server = buildServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      transport.close().catch(() => {});
      server.close().catch(() => {});
    });
    logRequest(req.body, req.auth);
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (err) {
      console.error('protected_upstream: error handling an MCP request:', err);
      if (!res.headersSent) {
        res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: `internal error: ${err.message}` }, id: null });
      }
    }
  });

  const notAllowed = (req, res) => {
    res.set('allow', 'POST');
    res.status(405).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server is stateless (POST only)' }, id: null });
  };
  app.get('/mcp', logRefusals, bearer, notAllowed);
  app.delete('/mcp', logRefusals, bearer, notAllowed);

  process.stdout.write(`${JSON.stringify({ url: resourceUrl, port })}\n`);
  console.error(`protected_upstream: listening at ${resourceUrl}, issuer ${opts.issuer}`);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    httpServer.close();
    httpServer.closeAllConnections?.();
    process.exit(0);
  });
}
