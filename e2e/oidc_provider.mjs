// A real OpenID Connect / OAuth 2.1 authorization server (the `oidc-provider` package) on
// loopback, for toolgate's end-to-end tests.
//
// Usage:
//   node oidc_provider.mjs [--port N] [--ttl SECONDS] [--keys-out FILE]
//
//   --port N         TCP port on 127.0.0.1; 0 (the default) picks a free one.
//   --ttl SECONDS    lifetime of the JWT access tokens it issues (default 300).
//   --keys-out FILE  after every key change, write the PRIVATE signing keys, as a JWKS
//                    {"keys":[...]} (newest, i.e. current signing key, first), to FILE, so a
//                    test can forge tokens with the real key (expired ones, say).
//
// When listening it prints exactly one JSON line to stdout:
//   {"issuer":"http://127.0.0.1:PORT","port":PORT}
// Everything else (oidc-provider's notices included) goes to stderr.
//
// What it serves (oidc-provider's standard routes, issuer = http://127.0.0.1:PORT):
//   /.well-known/openid-configuration and /.well-known/oauth-authorization-server (same document)
//   /auth (authorization), /token, /jwks, /reg (dynamic client registration), /me (userinfo),
//   /token/introspection, /token/revocation, /request (PAR), /session/end,
//   /interaction/:uid (the built-in devInteractions login and consent pages).
// Plus two test hooks:
//   GET /__counts   how many requests each path got so far, {"PATH": N, ...} (this hook's own
//                   requests not counted): what a test's traffic cost the provider.
//   POST /__rotate  generates a new RSA key that becomes the signing key; the JWKS then serves
//                   new + old. Answers 200 {"kid": NEWKID}. Implemented by building a new
//                   Provider with the new key list and swapping which instance the one
//                   http.Server dispatches to. Sessions, grants and refresh tokens survive the
//                   swap: every instance shares one in-memory store (see SharedMemoryAdapter).
//
// Features: client credentials; resource indicators (RFC 8707): access tokens are RS256 JWTs
// (typ at+jwt) whose `aud` is the `resource` asked for; any http URL on 127.0.0.1 or localhost
// is an acceptable resource; dynamic client registration (open, no initial access token);
// PKCE (S256) required of every client; devInteractions (any username logs in, any password);
// refresh tokens for every client allowed the refresh_token grant (no offline_access needed).
// Scopes: openid offline_access mcp. JWT access tokens of a logged-in user carry
// `groups` (alice -> ["readers"], bob -> ["writers"], others []) and `email` (ID@example.test).
//
// Static clients:
//   toolgate-cc     confidential, secret toolgate-cc-secret-0123456789 (client_secret_basic or
//                   client_secret_post), grants client_credentials and RFC 8693 token exchange.
//   toolgate-login  public (auth method none), native, authorization_code + refresh_token,
//                   redirect_uris ["http://127.0.0.1/callback"].
//   mcp-client      public, native, authorization_code + refresh_token, same redirect URI.
//   Loopback redirects on any port (RFC 8252 §7.3): oidc-provider does this natively for
//   clients with application_type "native": an http redirect_uri on 127.0.0.1, localhost or
//   [::1] matches a registered one that differs only in port (lib/models/client.js,
//   stripLoopbackPort). Web clients get exact matching only.
//
// RFC 8693 token exchange: oidc-provider 9.13.3 does NOT implement it natively (no handler for
// urn:ietf:params:oauth:grant-type:token-exchange in its source). It offers a public extension
// point, Provider#registerGrantType(name, handler, params), used here for a minimal
// exchange: the client authenticates as usual at /token and sends subject_token (a JWT access
// token this provider issued: verified against its own keys, its issuer, typ at+jwt and exp),
// subject_token_type=urn:ietf:params:oauth:token-type:access_token and resource=URL. The answer
// is a new RS256 JWT access token: sub, groups, email copied from the subject token,
// aud=resource, act={sub: client_id} (nesting any earlier act), client_id=the exchanging client,
// exp=now+TTL; issued_token_type urn:ietf:params:oauth:token-type:access_token, token_type Bearer.
// A bad subject token is refused with invalid_grant (error_description says why). Not checked:
// the subject token's own aud or client (any token of this issuer may be exchanged by a client
// allowed the grant); actor_token is refused; only one resource per request.

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';

import Provider, { errors } from 'oidc-provider';
import { SignJWT, createLocalJWKSet, importJWK, jwtVerify } from 'jose';

// oidc-provider prints its notices with console.info, which is stdout; stdout is reserved for
// the one JSON line, so send console.log/info to stderr.
console.log = (...args) => console.error(...args);
console.info = (...args) => console.error(...args);

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

function fail(message) {
  console.error(`oidc_provider: ${message}`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { port: 0, ttl: 300, keysOut: undefined };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(`${arg} needs a value`);
      i += 1;
      return argv[i];
    };
    switch (arg) {
      case '--port': {
        const v = value();
        opts.port = Number(v);
        if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) fail(`--port: not a port number: ${v}`);
        break;
      }
      case '--ttl': {
        const v = value();
        opts.ttl = Number(v);
        if (!Number.isInteger(opts.ttl) || opts.ttl <= 0) fail(`--ttl: not a positive whole number of seconds: ${v}`);
        break;
      }
      case '--keys-out':
        opts.keysOut = value();
        break;
      case '-h':
      case '--help':
        console.error('usage: node oidc_provider.mjs [--port N] [--ttl SECONDS] [--keys-out FILE]');
        process.exit(0);
        break;
      default:
        fail(`unknown argument: ${arg} (usage: node oidc_provider.mjs [--port N] [--ttl SECONDS] [--keys-out FILE])`);
    }
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));

// ---------------------------------------------------------------------------------------------
// Keys

let keySerial = 0;

function newSigningKey() {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = privateKey.export({ format: 'jwk' });
  keySerial += 1;
  jwk.kid = `rsa-${keySerial}-${crypto.randomBytes(6).toString('hex')}`;
  jwk.alg = 'RS256';
  jwk.use = 'sig';
  return jwk;
}

// Newest first: oidc-provider signs with the first key that fits the algorithm.
const keys = [newSigningKey()];

function publicJwk(jwk) {
  const { kty, n, e, kid, alg, use } = jwk;
  return { kty, n, e, kid, alg, use };
}

function writeKeys() {
  if (!opts.keysOut) return;
  const file = path.resolve(opts.keysOut);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(tmp, `${JSON.stringify({ keys }, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(tmp, file);
  } catch (err) {
    console.error(`oidc_provider: cannot write --keys-out file ${file}: ${err.message}`);
  }
}

// ---------------------------------------------------------------------------------------------
// A small in-memory adapter whose store outlives any one Provider instance, so that a key
// rotation (a new Provider) keeps sessions, interactions, grants and refresh tokens.

const store = new Map(); // "Model:id" -> { payload, expiresAt (ms) }
const uidIndex = new Map(); // session uid -> session id
const userCodeIndex = new Map(); // user code -> id
const grantIndex = new Map(); // grantId -> Set of store keys

const GRANT_BOUND = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

function liveEntry(key) {
  const entry = store.get(key);
  if (!entry) return undefined;
  if (entry.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
    store.delete(key);
    return undefined;
  }
  return entry;
}

class SharedMemoryAdapter {
  constructor(model) {
    this.model = model;
  }

  key(id) {
    return `${this.model}:${id}`;
  }

  async upsert(id, payload, expiresIn) {
    const key = this.key(id);
    // 15 s beyond the model's own expiry, like oidc-provider's clock tolerance.
    const expiresAt = typeof expiresIn === 'number' ? Date.now() + (expiresIn + 15) * 1000 : undefined;
    store.set(key, { payload, expiresAt });
    if (this.model === 'Session' && payload.uid) uidIndex.set(payload.uid, id);
    if (payload.userCode) userCodeIndex.set(payload.userCode, id);
    if (GRANT_BOUND.has(this.model) && payload.grantId) {
      if (!grantIndex.has(payload.grantId)) grantIndex.set(payload.grantId, new Set());
      grantIndex.get(payload.grantId).add(key);
    }
  }

  async find(id) {
    return liveEntry(this.key(id))?.payload;
  }

  async findByUid(uid) {
    const id = uidIndex.get(uid);
    return id === undefined ? undefined : this.find(id);
  }

  async findByUserCode(userCode) {
    const id = userCodeIndex.get(userCode);
    return id === undefined ? undefined : this.find(id);
  }

  async consume(id) {
    const entry = liveEntry(this.key(id));
    if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
  }

  async destroy(id) {
    store.delete(this.key(id));
  }

  async revokeByGrantId(grantId) {
    const members = grantIndex.get(grantId);
    if (members) {
      for (const key of members) store.delete(key);
      grantIndex.delete(grantId);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Provider configuration

const GROUPS = { alice: ['readers'], bob: ['writers'] };

function groupsFor(accountId) {
  return GROUPS[accountId] ? [...GROUPS[accountId]] : [];
}

function acceptableResource(resource) {
  let url;
  try {
    url = new URL(resource);
  } catch {
    return false;
  }
  return url.protocol === 'http:' && (url.hostname === '127.0.0.1' || url.hostname === 'localhost') && !url.hash;
}

// Cookie signing keys shared by every Provider instance, so a login that straddles a rotation
// still works.
const cookieKeys = [crypto.randomBytes(32).toString('base64url')];

function configuration() {
  return {
    adapter: SharedMemoryAdapter,
    jwks: { keys: keys.map((k) => ({ ...k })) },
    cookies: { keys: cookieKeys },
    scopes: ['openid', 'offline_access', 'mcp'],
    // Authorization code flow only (no implicit / hybrid).
    responseTypes: ['code'],
    clients: [
      {
        client_id: 'toolgate-cc',
        client_secret: 'toolgate-cc-secret-0123456789',
        grant_types: ['client_credentials', TOKEN_EXCHANGE],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      {
        client_id: 'toolgate-login',
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: ['http://127.0.0.1/callback'],
      },
      {
        client_id: 'mcp-client',
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: ['http://127.0.0.1/callback'],
      },
    ],
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      registration: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => undefined,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (ctx, resource) => {
          if (!acceptableResource(resource)) {
            throw new errors.InvalidTarget(`resource must be an http URL on 127.0.0.1 or localhost: ${resource}`);
          }
          return {
            scope: 'mcp',
            audience: resource,
            accessTokenTTL: opts.ttl,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    findAccount: async (ctx, id) => ({
      accountId: id,
      claims: async () => ({ sub: id }),
    }),
    extraTokenClaims: async (ctx, token) => {
      if (!token.accountId) return undefined; // client credentials: nothing extra
      return { groups: groupsFor(token.accountId), email: `${token.accountId}@example.test` };
    },
    issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
    ttl: {
      AccessToken: (ctx, token) => token.resourceServer?.accessTokenTTL ?? opts.ttl,
      ClientCredentials: (ctx, token) => token.resourceServer?.accessTokenTTL ?? opts.ttl,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 3600,
      Grant: 14 * 24 * 3600,
      Session: 14 * 24 * 3600,
      RefreshToken: 14 * 24 * 3600,
    },
    // Any origin may call the token endpoint from a browser; this is a test fixture.
    clientBasedCORS: () => true,
  };
}

// ---------------------------------------------------------------------------------------------
// RFC 8693 token exchange (minimal)

function teError(code, description) {
  return new errors.CustomOIDCProviderError(code, description);
}

function tokenExchangeHandler(issuer) {
  return async function tokenExchange(ctx) {
    const { params, client } = ctx.oidc;
    if (!params.subject_token) throw new errors.InvalidRequest('missing required parameter \'subject_token\'');
    if (!params.subject_token_type) throw new errors.InvalidRequest('missing required parameter \'subject_token_type\'');
    if (params.subject_token_type !== ACCESS_TOKEN_TYPE) {
      throw new errors.InvalidRequest(`unsupported subject_token_type (only ${ACCESS_TOKEN_TYPE})`);
    }
    if (params.requested_token_type && params.requested_token_type !== ACCESS_TOKEN_TYPE) {
      throw new errors.InvalidRequest(`unsupported requested_token_type (only ${ACCESS_TOKEN_TYPE})`);
    }
    if (params.actor_token) throw new errors.InvalidRequest('actor_token is not supported');
    const { resource } = params;
    if (!resource) throw new errors.InvalidTarget('resource is required for token exchange');
    if (Array.isArray(resource)) throw new errors.InvalidTarget('only one resource may be requested');
    if (!acceptableResource(resource)) {
      throw new errors.InvalidTarget(`resource must be an http URL on 127.0.0.1 or localhost: ${resource}`);
    }

    let subject;
    try {
      const jwks = createLocalJWKSet({ keys: keys.map(publicJwk) });
      ({ payload: subject } = await jwtVerify(params.subject_token, jwks, {
        issuer,
        typ: 'at+jwt',
        algorithms: ['RS256'],
        requiredClaims: ['sub', 'exp'],
      }));
    } catch (err) {
      throw teError('invalid_grant', `subject_token is not a valid access token of this issuer: ${err.code || err.name}: ${err.message}`);
    }

    const subjectScopes = new Set((subject.scope || '').split(' ').filter(Boolean));
    let scope = [...subjectScopes].join(' ');
    if (params.scope) {
      const wanted = params.scope.split(' ').filter(Boolean);
      const extra = wanted.filter((s) => !subjectScopes.has(s));
      if (extra.length) throw new errors.InvalidScope('requested scope exceeds the subject token\'s scope', extra.join(' '));
      scope = wanted.join(' ');
    }

    const act = { sub: client.clientId };
    if (subject.act) act.act = subject.act;
    const claims = { client_id: client.clientId, act };
    if (scope) claims.scope = scope;
    if (subject.groups !== undefined) claims.groups = subject.groups;
    if (subject.email !== undefined) claims.email = subject.email;

    const signingJwk = keys[0];
    const now = Math.floor(Date.now() / 1000);
    const accessToken = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: signingJwk.kid })
      .setIssuer(issuer)
      .setSubject(String(subject.sub))
      .setAudience(resource)
      .setIssuedAt(now)
      .setExpirationTime(now + opts.ttl)
      .setJti(crypto.randomBytes(16).toString('base64url'))
      .sign(await importJWK(signingJwk, 'RS256'));

    ctx.body = {
      access_token: accessToken,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: 'Bearer',
      expires_in: opts.ttl,
      ...(scope ? { scope } : {}),
    };
  };
}

// ---------------------------------------------------------------------------------------------
// Provider instances and the one server

function buildProvider(issuer) {
  const provider = new Provider(issuer, configuration());
  provider.registerGrantType(
    TOKEN_EXCHANGE,
    tokenExchangeHandler(issuer),
    ['subject_token', 'subject_token_type', 'requested_token_type', 'actor_token', 'actor_token_type', 'resource', 'audience', 'scope'],
  );
  provider.on('server_error', (ctx, err) => {
    console.error(`oidc_provider: server_error on ${ctx.method} ${ctx.path}:`, err);
  });
  for (const event of ['grant.error', 'authorization.error', 'registration_create.error', 'introspection.error', 'revocation.error', 'jwks.error', 'discovery.error', 'userinfo.error']) {
    provider.on(event, (ctx, err) => {
      console.error(`oidc_provider: ${event} on ${ctx.method} ${ctx.path}: ${err.error || err.message}: ${err.error_description || ''}${err.error_detail ? ` (${err.error_detail})` : ''}`);
    });
  }
  provider.on('grant.success', (ctx) => {
    console.error(`oidc_provider: token issued: grant_type=${ctx.oidc.params.grant_type} client=${ctx.oidc.client?.clientId}`);
  });
  return { provider, handle: provider.callback() };
}

let current; // { provider, handle }

function sendJson(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

const counts = {};

const server = http.createServer((req, res) => {
  const pathname = (req.url || '/').split('?')[0];
  if (pathname === '/__counts') {
    req.resume();
    sendJson(res, 200, counts);
    return;
  }
  counts[pathname] = (counts[pathname] ?? 0) + 1;
  if (pathname === '/__rotate') {
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      sendJson(res, 405, { error: 'method_not_allowed', error_description: 'POST /__rotate' });
      return;
    }
    req.resume();
    try {
      const jwk = newSigningKey();
      keys.unshift(jwk);
      current = buildProvider(current.provider.issuer);
      writeKeys();
      console.error(`oidc_provider: rotated signing key, now ${jwk.kid} (keys: ${keys.map((k) => k.kid).join(', ')})`);
      sendJson(res, 200, { kid: jwk.kid });
    } catch (err) {
      console.error('oidc_provider: key rotation failed:', err);
      sendJson(res, 500, { error: 'server_error', error_description: `key rotation failed: ${err.message}` });
    }
    return;
  }
  current.handle(req, res);
});

server.on('error', (err) => fail(`cannot listen on 127.0.0.1:${opts.port}: ${err.message}`));

server.listen(opts.port, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  try {
    current = buildProvider(issuer);
  } catch (err) {
    console.error('oidc_provider: cannot configure oidc-provider:', err);
    process.exit(1);
  }
  writeKeys();
  process.stdout.write(`${JSON.stringify({ issuer, port })}\n`);
  console.error(`oidc_provider: listening, issuer ${issuer}, signing key ${keys[0].kid}, access token TTL ${opts.ttl}s`);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    server.close();
    server.closeAllConnections?.();
    process.exit(0);
  });
}
