// Drives an authorization URL of oidc_provider.mjs headlessly, as a person in a browser would:
// follows the provider's redirects (keeping its cookies), signs in on the devInteractions login
// page (form fields: prompt=login, login=USERNAME, password=anything), confirms the consent page
// (prompt=consent), and stops at the first redirect that leaves the provider's origin, which is
// the client's redirect URI carrying `code`, `state` and `iss`.
//
// Usage:
//   node oidc_login.mjs AUTHORIZATION_URL USERNAME
//     then GETs that final URL (it reaches the client's own loopback listener) and prints one
//     JSON line: {"redirect": URL, "status": N, "body": FIRST_500_CHARS_OF_THE_ANSWER}
//     Exits non-zero, saying why, when a step is unexpected: a page with no form it knows, an
//     error page from the provider (its error text is quoted), an error redirect
//     (?error=...), too many steps, or the final URL unreachable.
//
// As a module:
//   import { login } from './oidc_login.mjs';
//   const redirect = await login(authorizationUrl, 'alice');   // -> the final redirect URL
//   login(url, user, { allowErrorRedirect: true }) returns an ?error= redirect instead of throwing.

import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const MAX_STEPS = 25;

export class LoginError extends Error {
  constructor(message) {
    super(message);
    this.name = 'LoginError';
  }
}

// ---------------------------------------------------------------------------------------------
// A small cookie jar: name/value/path per cookie, for one origin.

class CookieJar {
  constructor() {
    this.cookies = new Map(); // `${path}\n${name}` -> { name, value, path, expiresAt }
  }

  store(response, requestUrl) {
    const lines = typeof response.headers.getSetCookie === 'function' ? response.headers.getSetCookie() : [];
    for (const line of lines) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      let cookiePath;
      let expiresAt;
      for (const attr of attrs) {
        const aeq = attr.indexOf('=');
        const key = (aeq === -1 ? attr : attr.slice(0, aeq)).trim().toLowerCase();
        const val = aeq === -1 ? '' : attr.slice(aeq + 1).trim();
        if (key === 'path') cookiePath = val;
        else if (key === 'max-age') expiresAt = Date.now() + Number(val) * 1000;
        else if (key === 'expires' && expiresAt === undefined) {
          const t = Date.parse(val);
          if (!Number.isNaN(t)) expiresAt = t;
        }
      }
      if (!cookiePath || !cookiePath.startsWith('/')) {
        // RFC 6265 default path: the request path up to its last slash.
        const p = new URL(requestUrl).pathname;
        cookiePath = p.lastIndexOf('/') > 0 ? p.slice(0, p.lastIndexOf('/')) : '/';
      }
      const key = `${cookiePath}\n${name}`;
      if (expiresAt !== undefined && expiresAt <= Date.now()) {
        this.cookies.delete(key);
      } else {
        this.cookies.set(key, { name, value, path: cookiePath, expiresAt });
      }
    }
  }

  header(url) {
    const { pathname } = new URL(url);
    const now = Date.now();
    const out = [];
    for (const c of this.cookies.values()) {
      if (c.expiresAt !== undefined && c.expiresAt <= now) continue;
      const matches = pathname === c.path
        || (pathname.startsWith(c.path) && (c.path.endsWith('/') || pathname[c.path.length] === '/'));
      if (matches) out.push(`${c.name}=${c.value}`);
    }
    return out.join('; ');
  }
}

// ---------------------------------------------------------------------------------------------
// HTML helpers (the provider's own pages only; good enough for them)

function decodeEntities(text) {
  return text
    .replace(/&#x([0-9a-f]+);/gi, (_, h) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d) => String.fromCodePoint(Number(d)))
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function attr(tag, name) {
  const m = tag.match(new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i'));
  if (!m) return undefined;
  return decodeEntities(m[1] ?? m[2] ?? m[3]);
}

function parseForms(html) {
  const forms = [];
  const formRe = /<form\b([^>]*)>([\s\S]*?)<\/form>/gi;
  let m;
  while ((m = formRe.exec(html))) {
    const openTag = `<form${m[1]}>`;
    const inputs = [];
    const inputRe = /<input\b[^>]*>/gi;
    let im;
    while ((im = inputRe.exec(m[2]))) {
      inputs.push({ name: attr(im[0], 'name'), type: (attr(im[0], 'type') || 'text').toLowerCase(), value: attr(im[0], 'value') });
    }
    forms.push({ action: attr(openTag, 'action'), method: (attr(openTag, 'method') || 'get').toLowerCase(), inputs });
  }
  return forms;
}

// The provider's error page shows `<pre><strong>KEY</strong>: VALUE</pre>` rows.
function providerErrorText(html) {
  const rows = [];
  const re = /<pre><strong>([^<]*)<\/strong>:\s*([\s\S]*?)<\/pre>/gi;
  let m;
  while ((m = re.exec(html))) rows.push(`${decodeEntities(m[1])}: ${decodeEntities(m[2]).trim()}`);
  if (rows.length) return rows.join('; ');
  const title = html.match(/<title>([\s\S]*?)<\/title>/i);
  const text = decodeEntities(html.replace(/<style[\s\S]*?<\/style>/gi, '').replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ').trim();
  return `${title ? `${decodeEntities(title[1]).trim()}: ` : ''}${text.slice(0, 300)}`;
}

function describeBody(contentType, body) {
  if (/json/i.test(contentType || '')) {
    try {
      const j = JSON.parse(body);
      if (j.error) return `${j.error}${j.error_description ? `: ${j.error_description}` : ''}`;
    } catch { /* fall through */ }
  }
  if (/html/i.test(contentType || '') || /^\s*</.test(body)) return providerErrorText(body);
  return body.slice(0, 300);
}

// ---------------------------------------------------------------------------------------------

/**
 * Signs USERNAME in at the provider that serves AUTHORIZATION_URL and consents; returns the URL
 * of the redirect that leaves the provider's origin (the client's redirect URI with code/state).
 */
export async function login(authorizationUrl, username, { allowErrorRedirect = false } = {}) {
  let url;
  try {
    url = new URL(authorizationUrl);
  } catch {
    throw new LoginError(`not a URL: ${authorizationUrl}`);
  }
  if (!username) throw new LoginError('no username given');
  const origin = url.origin;
  const jar = new CookieJar();
  let request = { url: url.href, method: 'GET', body: undefined };
  const seen = [];

  for (let step = 0; step < MAX_STEPS; step += 1) {
    seen.push(`${request.method} ${new URL(request.url).pathname}`);
    const headers = { accept: 'text/html,application/xhtml+xml', 'user-agent': 'toolgate-e2e-oidc-login/1' };
    const cookie = jar.header(request.url);
    if (cookie) headers.cookie = cookie;
    if (request.body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';

    let response;
    try {
      response = await fetch(request.url, { method: request.method, headers, body: request.body, redirect: 'manual' });
    } catch (err) {
      throw new LoginError(`${request.method} ${request.url} failed: ${err.cause?.message || err.message}`);
    }
    jar.store(response, request.url);

    if (response.status >= 300 && response.status < 400) {
      const location = response.headers.get('location');
      await response.arrayBuffer();
      if (!location) throw new LoginError(`${request.method} ${request.url} answered ${response.status} without a Location header`);
      const next = new URL(location, request.url);
      if (next.origin !== origin) {
        const error = next.searchParams.get('error');
        if (error && !allowErrorRedirect) {
          const desc = next.searchParams.get('error_description');
          throw new LoginError(`the provider redirected to the client with error=${error}${desc ? ` (${desc})` : ''}: ${next.href}`);
        }
        if (!error && !next.searchParams.get('code')) {
          throw new LoginError(`the redirect that leaves the provider carries neither code nor error: ${next.href}`);
        }
        return next.href;
      }
      request = { url: next.href, method: 'GET', body: undefined };
      continue;
    }

    const contentType = response.headers.get('content-type') || '';
    const body = await response.text();
    if (response.status !== 200) {
      throw new LoginError(`the provider answered ${response.status} to ${request.method} ${request.url}: ${describeBody(contentType, body)}`);
    }

    const forms = parseForms(body);
    const form = forms.find((f) => f.inputs.some((i) => i.name === 'prompt'));
    if (!form) {
      if (forms.some((f) => f.action && new URL(f.action, request.url).origin !== origin)) {
        throw new LoginError(`the provider answered with a form posting off-origin (response_mode=form_post?); only redirect responses are supported: ${request.url}`);
      }
      throw new LoginError(`no login or consent form on the page at ${request.url} (provider says: ${describeBody(contentType, body)})`);
    }
    if (form.method !== 'post' || !form.action) {
      throw new LoginError(`unexpected form on ${request.url}: method=${form.method} action=${form.action}`);
    }

    const prompt = form.inputs.find((i) => i.name === 'prompt').value;
    const fields = new URLSearchParams();
    for (const input of form.inputs) {
      if (!input.name) continue;
      if (input.type === 'hidden') fields.set(input.name, input.value ?? '');
    }
    if (prompt === 'login') {
      if (!form.inputs.some((i) => i.name === 'login')) throw new LoginError(`the login form at ${request.url} has no "login" field`);
      fields.set('login', username);
      if (form.inputs.some((i) => i.name === 'password')) fields.set('password', 'any-password');
    } else if (prompt !== 'consent') {
      throw new LoginError(`unknown interaction prompt "${prompt}" at ${request.url}`);
    }
    request = { url: new URL(form.action, request.url).href, method: 'POST', body: fields.toString() };
  }
  throw new LoginError(`gave up after ${MAX_STEPS} steps without leaving the provider: ${seen.join(' -> ')}`);
}

// ---------------------------------------------------------------------------------------------
// CLI

async function main() {
  const [authorizationUrl, username] = process.argv.slice(2);
  if (!authorizationUrl || !username) {
    console.error('usage: node oidc_login.mjs AUTHORIZATION_URL USERNAME');
    process.exit(2);
  }
  let redirect;
  try {
    redirect = await login(authorizationUrl, username);
  } catch (err) {
    console.error(`oidc_login: ${err.message}`);
    process.exit(1);
  }
  let response;
  let body;
  try {
    response = await fetch(redirect, { redirect: 'manual' });
    body = await response.text();
  } catch (err) {
    console.error(`oidc_login: the final redirect ${redirect} could not be fetched (is the client's loopback listener up?): ${err.cause?.message || err.message}`);
    process.exit(1);
  }
  process.stdout.write(`${JSON.stringify({ redirect, status: response.status, body: body.slice(0, 500) })}\n`);
}

function isMain() {
  try {
    return realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  await main();
}
