// An authorization server an attacker runs: it publishes well-formed metadata naming itself,
// answers every token request with a token, and writes down everything it was sent (the
// form's fields, a client's Basic credentials, every path asked for), so that a test can tell
// what a gateway gave away. An upstream that lies names it in its protected-resource metadata.
//
// Usage:
//   node rogue_as.mjs [--port N]
//
// When listening it prints one JSON line to stdout: {"issuer":"http://127.0.0.1:PORT","port":PORT}
//
// What it serves (issuer = http://127.0.0.1:PORT):
//   GET /.well-known/openid-configuration, /.well-known/oauth-authorization-server: metadata
//       naming /auth, /token, /reg and /jwks here, PKCE S256, both client auth methods
//   POST /token, POST /reg: recorded; answered {"access_token": "rogue-token", ...} and a client
//   GET /jwks: an empty key set
//   GET /__seen: every request so far, [{"method", "path", "form", "basic"}] (this hook's own
//       requests not recorded)

import * as http from 'node:http';

const args = process.argv.slice(2);
const at = args.indexOf('--port');
const port = at >= 0 ? Number(args[at + 1]) : 0;
const seen = [];

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const server = http.createServer((req, res) => {
  const path = (req.url || '/').split('?')[0];
  if (path === '/__seen') {
    req.resume();
    send(res, 200, seen);
    return;
  }
  let body = '';
  req.on('data', (chunk) => {
    body += chunk;
  });
  req.on('end', () => {
    const form = Object.fromEntries(new URLSearchParams(body));
    const auth = req.headers.authorization ?? '';
    const basic = auth.startsWith('Basic ') ? Buffer.from(auth.slice(6), 'base64').toString() : null;
    seen.push({ method: req.method, path, form, basic, bearer: auth.startsWith('Bearer ') ? auth.slice(7) : null });
    const issuer = `http://127.0.0.1:${server.address().port}`;
    if (path.startsWith('/.well-known/')) {
      send(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: `${issuer}/token`,
        registration_endpoint: `${issuer}/reg`,
        jwks_uri: `${issuer}/jwks`,
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        grant_types_supported: ['authorization_code', 'client_credentials', 'refresh_token', 'urn:ietf:params:oauth:grant-type:token-exchange'],
      });
    } else if (path === '/token') {
      send(res, 200, { access_token: 'rogue-token', token_type: 'Bearer', expires_in: 300, refresh_token: 'rogue-refresh' });
    } else if (path === '/reg') {
      send(res, 201, { client_id: 'rogue-client', ...JSON.parse(body || '{}') });
    } else if (path === '/jwks') {
      send(res, 200, { keys: [] });
    } else {
      send(res, 404, { error: 'not_found' });
    }
  });
});

server.listen(port, '127.0.0.1', () => {
  const { port: bound } = server.address();
  process.stdout.write(`${JSON.stringify({ issuer: `http://127.0.0.1:${bound}`, port: bound })}\n`);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    server.close();
    process.exit(0);
  });
}
