// A stand-in OpenID Connect provider (Google's role) for svc-auth's tests, built on oidc-provider.
//
//   node server.js --port P --client-id ID --client-secret SECRET --redirect-uri URI [--redirect-uri URI2 ...]
//
// The issuer is http://127.0.0.1:P (with --port 0 the system picks the port). When it listens it
// prints one line to stdout: "ready <issuer>".
//
// There is no UI: every authorization request goes through one interaction that completes at once,
// signing in as the "next account" (in a new provider session, whatever cookies the browser has)
// and granting the requested scopes. Test controls:
//   POST /test/next-login     JSON {"sub", "email", "email_verified", "name", ...}: the account the
//                             following logins sign in as, until changed or reset.
//   POST /test/deny-next      the next interaction ends with error=access_denied at the redirect_uri.
//   GET  /test/last-authorize the query of the last GET authorization request, as JSON (or null).
//   POST /test/redirect-uris  JSON {"redirect_uris": [...]}: allow more redirect URIs for the client.
//   POST /test/reset          default account, no pending denial, no recorded request, no extra URIs.

import crypto from 'node:crypto';
import http from 'node:http';
import { parseArgs } from 'node:util';

import Provider, { interactionPolicy } from 'oidc-provider';

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'client-id': { type: 'string' },
    'client-secret': { type: 'string' },
    'redirect-uri': { type: 'string', multiple: true, default: [] },
  },
});

for (const name of ['client-id', 'client-secret']) {
  if (!args[name]) {
    console.error(`--${name} is required`);
    process.exit(2);
  }
}
if (args['redirect-uri'].length === 0) {
  console.error('at least one --redirect-uri is required');
  process.exit(2);
}

const DEFAULT_ACCOUNT = Object.freeze({
  sub: 'google-user-1',
  email: 'ada@example.com',
  email_verified: true,
  name: 'Ada Lovelace',
});

const state = {
  nextAccount: { ...DEFAULT_ACCOUNT },
  accounts: new Map(), // sub -> claims, as they were when that account last signed in
  denyNext: false,
  lastAuthorize: null,
  extraRedirectUris: new Set(),
};

function resetState() {
  state.nextAccount = { ...DEFAULT_ACCOUNT };
  state.accounts.clear();
  state.denyNext = false;
  state.lastAuthorize = null;
  state.extraRedirectUris.clear();
}

// Bind first, so that --port 0 works and the issuer names the real port.
const server = http.createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(Number(args.port), '127.0.0.1', resolve);
});
const issuer = `http://127.0.0.1:${server.address().port}`;

// A fresh RSA signing key for each run (so oidc-provider does not fall back to its dev keys).
const signingKey = {
  ...crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }),
  kid: crypto.randomBytes(8).toString('hex'),
  alg: 'RS256',
  use: 'sig',
};

// Every authorization request asks for a login, so the "next account" always applies, even to a
// client that still holds a session cookie from an earlier flow. The check is satisfied on the
// resume that carries the login result.
const policy = interactionPolicy.base();
policy.get('login').checks.unshift(new interactionPolicy.Check(
  'fresh_login',
  'every authorization request signs in the next test account',
  (ctx) => !ctx.oidc.result?.login,
));
// Google accepts prompt=select_account; without this oidc-provider would refuse the value.
policy.add(new interactionPolicy.Prompt({ name: 'select_account', requestable: true }));

const provider = new Provider(issuer, {
  clients: [{
    client_id: args['client-id'],
    client_secret: args['client-secret'],
    redirect_uris: args['redirect-uri'],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    // oidc-provider accepts client_secret_post as well for a client_secret_basic client.
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  jwks: { keys: [signingKey] },
  cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
  claims: {
    openid: ['sub', 'hd'],
    email: ['email', 'email_verified'],
    profile: ['name', 'given_name', 'family_name', 'picture', 'locale'],
  },
  scopes: ['openid', 'email', 'profile', 'offline_access'],
  // Put the scope's claims into the ID token even in the code flow, as Google does.
  conformIdTokenClaims: false,
  responseTypes: ['code'],
  pkce: { required: () => true },
  allowOmittingSingleRegisteredRedirectUri: false,
  // Seconds; set explicitly so oidc-provider does not log a notice for each default it uses.
  ttl: {
    AccessToken: 3600,
    AuthorizationCode: 600,
    Grant: 3600,
    IdToken: 3600,
    Interaction: 600,
    Session: 3600,
  },
  features: {
    devInteractions: { enabled: false },
  },
  interactions: {
    policy,
    url: (_ctx, interaction) => `/interaction/${interaction.uid}`,
  },
  async findAccount(_ctx, sub) {
    const claims = state.accounts.get(sub);
    if (!claims) {
      return undefined;
    }
    return {
      accountId: sub,
      async claims() {
        return { ...claims, sub };
      },
    };
  },
  async renderError(ctx, out) {
    ctx.type = 'json';
    ctx.body = out;
  },
});
// Plain http on 127.0.0.1, no proxy in front: do not trust X-Forwarded-* headers.
provider.proxy = false;

const originalRedirectUriAllowed = provider.Client.prototype.redirectUriAllowed;
provider.Client.prototype.redirectUriAllowed = function redirectUriAllowed(value) {
  return state.extraRedirectUris.has(value) || originalRedirectUriAllowed.call(this, value);
};

const authorizationPath = new URL(provider.urlFor('authorization')).pathname;
const providerCallback = provider.callback();

function sendJson(res, status, body) {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(payload),
    'Cache-Control': 'no-store',
  });
  res.end(payload);
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) {
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : {};
}

async function handleTestControl(req, res, pathname) {
  const route = `${req.method} ${pathname}`;
  switch (route) {
    case 'POST /test/next-login': {
      const body = await readJson(req);
      if (typeof body !== 'object' || body === null || typeof body.sub !== 'string' || !body.sub) {
        sendJson(res, 400, { error: 'a JSON object with a non-empty "sub" is required' });
        return;
      }
      state.nextAccount = { ...body };
      sendJson(res, 200, { next_login: state.nextAccount });
      return;
    }
    case 'POST /test/deny-next':
      state.denyNext = true;
      sendJson(res, 200, { deny_next: true });
      return;
    case 'GET /test/last-authorize':
      sendJson(res, 200, state.lastAuthorize);
      return;
    case 'POST /test/redirect-uris': {
      const body = await readJson(req);
      const uris = body?.redirect_uris;
      if (!Array.isArray(uris) || !uris.every((uri) => typeof uri === 'string' && URL.canParse(uri))) {
        sendJson(res, 400, { error: 'a JSON object {"redirect_uris": [absolute URLs]} is required' });
        return;
      }
      uris.forEach((uri) => state.extraRedirectUris.add(uri));
      sendJson(res, 200, { extra_redirect_uris: [...state.extraRedirectUris] });
      return;
    }
    case 'POST /test/reset':
      resetState();
      sendJson(res, 200, { reset: true });
      return;
    default:
      sendJson(res, 404, { error: `no test control ${route}` });
  }
}

// The one interaction of each authorization request: login as the next account and grant what the
// request asks for (or deny it, when a test asked for that).
async function handleInteraction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session } = details;

  if (state.denyNext) {
    state.denyNext = false;
    await provider.interactionFinished(req, res, {
      error: 'access_denied',
      error_description: 'End-User denied the request',
    }, { mergeWithLastSubmission: false });
    return;
  }

  const result = {};
  let accountId = session?.accountId;
  if (prompt.name !== 'consent' || !accountId) {
    const account = { ...state.nextAccount };
    accountId = account.sub;
    state.accounts.set(accountId, account);
    result.login = { accountId, remember: false };
  }
  if (params.prompt?.split(' ').includes('select_account')) {
    result.select_account = {};
  }

  let grant;
  if (details.grantId && !result.login) {
    grant = await provider.Grant.find(details.grantId);
  }
  grant ??= new provider.Grant({ accountId, clientId: params.client_id });
  if (params.scope) {
    grant.addOIDCScope(params.scope);
  }
  const missing = prompt.details ?? {};
  if (missing.missingOIDCScope) {
    grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  }
  if (missing.missingOIDCClaims) {
    grant.addOIDCClaims(missing.missingOIDCClaims);
  }
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  result.consent = { grantId: await grant.save() };

  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
}

// Each authorization request ends in a new provider session, as if the browser had none: otherwise
// signing in as another account than the session's makes oidc-provider answer with an
// auto-submitting logout form, which only a browser running scripts would get through.
const sessionCookie = provider.cookieName('session');
function forgetSession(req) {
  if (!req.headers.cookie) {
    return;
  }
  const kept = req.headers.cookie.split(';').map((part) => part.trim()).filter((part) => {
    const name = part.split('=', 1)[0];
    return name !== sessionCookie && !name.startsWith(`${sessionCookie}.`);
  });
  if (kept.length) {
    req.headers.cookie = kept.join('; ');
  } else {
    delete req.headers.cookie;
  }
}

server.on('request', async (req, res) => {
  const url = new URL(req.url, issuer);
  try {
    if (url.pathname.startsWith('/test/')) {
      await handleTestControl(req, res, url.pathname);
      return;
    }
    if (req.method === 'GET' && url.pathname.startsWith('/interaction/')) {
      await handleInteraction(req, res);
      return;
    }
    if (url.pathname === authorizationPath && req.method === 'GET') {
      state.lastAuthorize = Object.fromEntries(url.searchParams);
    }
    if (url.pathname === authorizationPath || url.pathname.startsWith(`${authorizationPath}/`)) {
      forgetSession(req); // the request and its resume
    }
    await providerCallback(req, res);
  } catch (err) {
    console.error(err);
    if (!res.headersSent) {
      sendJson(res, 500, { error: 'server_error', error_description: String(err?.message ?? err) });
    } else {
      res.end();
    }
  }
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}

console.log(`ready ${issuer}`);
