// A relying party built only from openid-client (the certified Node library), signing a person in
// to svc-auth the way a client site would, with the library's defaults (a client secret is sent
// as client_secret_post; plain http is allowed, for the test server only). Nothing of
// svc-auth's is used here.
//
//   node rp.mjs '<json>'   with {issuer, clientId, clientSecret?, redirectUri, postLogoutUri,
//                                 email, password}
//
// It plays the browser too (a cookie jar, redirects followed by hand, the hosted login form
// submitted with its CSRF token), and prints one JSON line: what each step gave. When the first
// token request is refused, the line says how ({tokenError}) and the run stops there.
import * as client from "openid-client";

const input = JSON.parse(process.argv[2]);
const out = {};

// The browser: cookies by name, redirects followed by hand until one leaves the service.
const jar = new Map();
async function browse(url, init = {}) {
  const headers = new Headers(init.headers || {});
  if (jar.size) headers.set("cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
  const response = await fetch(url, { ...init, headers, redirect: "manual" });
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(";");
    const at = pair.indexOf("=");
    const value = pair.slice(at + 1);
    if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === "") jar.delete(pair.slice(0, at));
    else jar.set(pair.slice(0, at), value);
  }
  return response;
}
async function follow(url) {
  let current = new URL(url);
  for (let hops = 0; hops < 10; hops++) {
    if (current.origin !== new URL(input.issuer).origin) return current;
    const response = await browse(current);
    const location = response.headers.get("location");
    if (!location) return { page: current, status: response.status, text: await response.text() };
    current = new URL(location, current);
  }
  throw new Error("too many redirects");
}
async function signIn(page) {
  const text = await (await browse(page)).text();
  const csrf = text.match(/name="csrf_token"[^>]*value="([^"]+)"/)[1];
  const action = new URL(page);  // the form posts back to its own page
  const response = await browse(action, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ csrf_token: csrf, email: input.email, password: input.password }),
  });
  return new URL(response.headers.get("location"), action);
}

const config = await client.discovery(new URL(input.issuer), input.clientId, input.clientSecret,
  undefined, { execute: [client.allowInsecureRequests] });
out.discovered = config.serverMetadata().issuer;

const verifier = client.randomPKCECodeVerifier();
const nonce = client.randomNonce();
const state = client.randomState();
const start = client.buildAuthorizationUrl(config, {
  redirect_uri: input.redirectUri, scope: "openid email profile offline_access", nonce, state,
  code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256",
});
const loginPage = await browse(start);
const login = new URL(loginPage.headers.get("location"), start);
out.loginPage = login.pathname;
const callback = await follow(await signIn(login));

let tokens;
try {
  tokens = await client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true,
  });
} catch (error) {
  // A 401 with WWW-Authenticate is read as a challenge; any other refusal as a body.
  const said = error instanceof client.WWWAuthenticateChallengeError
    ? error.cause[0].parameters : error instanceof client.ResponseBodyError ? error : null;
  if (said === null) throw error;
  out.tokenError = { status: error.status, error: said.error,
                     description: said.error_description };
  console.log(JSON.stringify(out));
  process.exit(0);
}
const claims = tokens.claims();
out.claims = { sub: claims.sub, aud: claims.aud, nonce: claims.nonce, email: claims.email,
               at_hash: Boolean(claims.at_hash), sid: Boolean(claims.sid), amr: claims.amr,
               auth_time: Boolean(claims.auth_time) };
out.scope = tokens.scope;

const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
out.userinfo = info;

// Single sign-on: a second authorization in this browser needs no form.
const again = await follow(client.buildAuthorizationUrl(config, {
  redirect_uri: input.redirectUri, scope: "openid", state,
  code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256",
}));
out.singleSignOn = again instanceof URL && again.searchParams.has("code");

const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token);
out.refreshed = refreshed.refresh_token !== tokens.refresh_token && Boolean(refreshed.access_token);
// Within the grace window (two tabs refreshing at once) the old token gets the same successor.
const twice = await client.refreshTokenGrant(config, tokens.refresh_token);
out.refreshedTwiceGetsTheSameSuccessor = twice.refresh_token === refreshed.refresh_token;

await client.tokenRevocation(config, refreshed.refresh_token);
out.afterRevocation = (await fetch(new URL("/api/v2/auth/verify", input.issuer), {
  headers: { authorization: `Bearer ${refreshed.access_token}` } })).status;

// A fresh sign-in, then RP-initiated logout.
const third = await client.authorizationCodeGrant(config, await follow(
  client.buildAuthorizationUrl(config, {
    redirect_uri: input.redirectUri, scope: "openid email", nonce, state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256" })),
  { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state });
const logout = client.buildEndSessionUrl(config, {
  id_token_hint: third.id_token, post_logout_redirect_uri: input.postLogoutUri, state: "bye" });
const loggedOut = await browse(logout);
out.logout = loggedOut.headers.get("location");
out.afterLogout = (await fetch(new URL("/api/v2/auth/verify", input.issuer), {
  headers: { authorization: `Bearer ${third.access_token}` } })).status;
const signedOut = await browse(client.buildAuthorizationUrl(config, {
  redirect_uri: input.redirectUri, scope: "openid", state, prompt: "none",
  code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256",
}));
out.promptNoneAfterLogout = new URL(signedOut.headers.get("location")).searchParams.get("error");

// A pushed authorization request (RFC 9126), signed out: the library posts the parameters to the
// provider, the browser carries only client_id and request_uri through the hosted login form.
const pushedNonce = client.randomNonce();
const pushed = await client.buildAuthorizationUrlWithPAR(config, {
  redirect_uri: input.redirectUri, scope: "openid email", nonce: pushedNonce, state,
  code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256",
});
out.pushedQuery = [...pushed.searchParams.keys()].sort();
const pushedLogin = new URL((await browse(pushed)).headers.get("location"), pushed);
const pushedTokens = await client.authorizationCodeGrant(config, await follow(await signIn(pushedLogin)),
  { pkceCodeVerifier: verifier, expectedNonce: pushedNonce, expectedState: state });
out.pushed = { nonce: pushedTokens.claims().nonce === pushedNonce, scope: pushedTokens.scope };

console.log(JSON.stringify(out));
