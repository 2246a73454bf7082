// What the OAuth end-to-end scripts (oauth.mjs, identity.mjs) share: starting the processes
// they stage and stopping them all at exit, free ports, JSON-RPC over streamable HTTP by hand,
// tokens read apart, and `toolgate login` driven as a person in a browser would.

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';

import { login } from './oidc_login.mjs';

/** Every process started here, stopped at exit. */
export const children = [];

export function cleanup() {
  for (const child of children) {
    try {
      child.kill('SIGTERM');
    } catch {}
  }
}
process.on('exit', cleanup);

/** Starts a process and resolves with the first JSON line it prints. */
export function startJson(command, argv, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    children.push(child);
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`${command} ${argv.join(' ')} printed nothing in 30 s: ${err}`)), 30000);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const line = out.split('\n').find((l) => l.trim().startsWith('{'));
      if (line) {
        clearTimeout(timer);
        resolve({ child, info: JSON.parse(line) });
      }
    });
    child.stderr.on('data', (chunk) => {
      err += chunk;
    });
    child.on('exit', (code) => reject(new Error(`${command} exited (${code}): ${err.slice(-2000)}`)));
  });
}

export function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export const b64url = (buffer) => Buffer.from(buffer).toString('base64url');
export const claimsOf = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());
export const headerOf = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[0], 'base64url').toString());

/** One JSON-RPC message to the gateway; returns the status, headers and the answer, if any.
 * With `timeoutMs`, a reply that takes longer is given up (the fetch throws). */
export async function rpc(url, token, message, session, timeoutMs) {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
  };
  if (token) headers.authorization = `Bearer ${token}`;
  if (session) headers['mcp-session-id'] = session;
  const signal = timeoutMs ? AbortSignal.timeout(timeoutMs) : undefined;
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(message), signal });
  const text = await response.text();
  let answer = null;
  for (const line of text.split('\n')) {
    const data = line.startsWith('data:') ? line.slice(5).trim() : line.trim();
    if (data.startsWith('{')) {
      try {
        const parsed = JSON.parse(data);
        if ('result' in parsed || 'error' in parsed) answer = parsed;
      } catch {}
    }
  }
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate'),
    session: response.headers.get('mcp-session-id'),
    answer,
    text: text.slice(0, 600),
  };
}

export const initialize = {
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'oauth-e2e', version: '1' } },
};

/** Opens a session with `token`; returns its id (or the refusal). */
export async function openSession(url, token) {
  const opened = await rpc(url, token, initialize);
  if (opened.status === 200 && opened.session) {
    await rpc(url, token, { jsonrpc: '2.0', method: 'notifications/initialized' }, opened.session);
  }
  return opened;
}

/** Runs `toolgate login NAME`, signing in as `username` at the URL it prints. */
export function toolgateLogin(toolgate, name, username, env, config) {
  return new Promise((resolve, reject) => {
    const child = spawn(toolgate, ['login', name, '--config', config, '--no-browser', '--timeout-secs', '60'], {
      env, stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    let err = '';
    let driven = null;
    child.stdout.on('data', (c) => { out += c; });
    child.stderr.on('data', (c) => {
      err += c;
      const url = err.split('\n').map((l) => l.trim()).find((l) => l.startsWith('http'));
      if (url && !driven) {
        // The browser follows the provider's last redirect to toolgate's loopback listener.
        driven = login(url, username).then(
          async (redirect) => {
            const back = await fetch(redirect);
            return { redirect, status: back.status, body: (await back.text()).slice(0, 200) };
          },
          (e) => ({ error: String(e) }),
        );
      }
    });
    child.on('exit', async (code) => {
      const drove = driven ? await driven : { error: 'no URL was printed' };
      resolve({ code, stdout: out, stderr: err, drove, printedUrl: Boolean(driven) });
    });
    child.on('error', reject);
  });
}

/** Polls the gateway's status until `count` servers are listed and none is starting. */
export async function untilSettled(statusUrl, token, count) {
  let status = null;
  for (let i = 0; i < 150; i++) {
    try {
      const response = await fetch(statusUrl, { headers: { authorization: `Bearer ${token}` } });
      if (response.ok) {
        status = await response.json();
        const states = (status.servers ?? []).map((s) => s.state);
        if (states.length === count && states.every((s) => s !== 'starting')) break;
      }
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  return (status?.servers ?? []).map((s) => ({ name: s.name, state: s.state, error: s.error ?? s.last_error ?? null }));
}

/** Runs `main`, then prints `report` as one JSON line (with `fatal` when `main` threw), stops
 * every process started here, removes `work` when all went well, and exits. */
export function run(main, report, work) {
  main().then(
    () => {
      process.stdout.write(`${JSON.stringify(report)}\n`);
      cleanup();
      fs.rmSync(work, { recursive: true, force: true });
      process.exit(0);
    },
    (e) => {
      report.fatal = String(e?.stack ?? e);
      process.stdout.write(`${JSON.stringify(report)}\n`);
      cleanup();
      process.exit(1);
    },
  );
}
