// svc-auth.js: the browser client of svc-auth for client sites. An ES module, no dependencies,
// no build step. Import it from the service's origin:
//
//   import { SvcAuth } from "https://<service>/static/svc-auth.js";
//   const auth = new SvcAuth({ baseUrl: "https://<service>", brand: "svc", site: "symbols" });
//
// Tokens live in local storage under `${brand}_access_token` and `${brand}_refresh_token`.
// `auth.fetch` adds the bearer token; on a 401 it refreshes once and retries once. Every call in
// a tab that meets a 401 shares one refresh (one promise in flight), and the tabs of a site share
// one refresh between them too (a Web Lock, and a fresh look at storage once the lock is held).
// A refresh the service refuses signs the person out in every tab ("signedout"); a 402 or 403
// fires "upgrade" with the pricing link.

const REFRESH_LOCK = "svc-auth-refresh";
const EVENTS = new Set(["signedout", "upgrade"]);
// A refresh that fails with one of these may work later: keep the tokens, report the 401.
const TRANSIENT = new Set([408, 425, 429]);
// How long a tab that waited for another tab's refresh waits for that tab's new tokens to reach
// its copy of local storage, before it concludes there are none and refreshes itself.
const STORAGE_SETTLE_MS = 500;

function base64url(bytes) {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function randomToken(size) {
  return base64url(crypto.getRandomValues(new Uint8Array(size)));
}

async function s256(verifier) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

function text(value) {
  return typeof value === "string" ? value : "";
}

/** The token pair of a login, refresh or exchange answer: top level first, then `session`. */
function tokensOf(body) {
  const nested = body && typeof body.session === "object" && body.session ? body.session : {};
  return {
    access: text(body?.access_token) || text(nested.access_token),
    refresh: text(body?.refresh_token) || text(nested.refresh_token),
  };
}

async function jsonOf(response) {
  try {
    return await response.json();
  } catch {
    return null;
  }
}

function authError(code, message, status = 0) {
  const error = new Error(message || code);
  error.name = "SvcAuthError";
  error.code = code;
  error.status = status;
  return error;
}

function problemError(response, body, fallback) {
  const error = authError(text(body?.code) || fallback,
                          text(body?.detail) || `HTTP ${response.status}`, response.status);
  // "mfa_required" (v1 login of an account with a second factor): where to sign in instead.
  if (text(body?.login_url)) error.loginUrl = text(body.login_url);
  // captcha_required / captcha_invalid: the widget to show ({provider, site_key}).
  const captcha = body?.captcha;
  if (captcha && typeof captcha === "object") {
    error.captcha = { provider: text(captcha.provider), siteKey: text(captcha.site_key) };
  }
  return error;
}

/** The session id (`sid`) an access token carries, "" when it has none or is not a JWT. */
function sessionIdOf(token) {
  try {
    const payload = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const sid = JSON.parse(atob(payload)).sid;
    return typeof sid === "string" ? sid : "";
  } catch {
    return "";
  }
}

function report(error) {
  if (typeof globalThis.reportError === "function") globalThis.reportError(error);
  else setTimeout(() => { throw error; });
}

export class SvcAuth {
  #baseUrl;
  #brand;
  #site;
  #pricingUrl;
  #storage;
  #accessKey;
  #refreshKey;
  #pkceKey;
  #handlers = new Map();
  #refreshing = null; // the refresh this tab is waiting for, shared by every call that met a 401
  #signedOutAnnounced = false;

  /**
   * @param {object} options
   * @param {string} options.baseUrl   the service, e.g. "https://accounts.example"
   * @param {string} [options.brand]   the brand word of the storage keys (default "svc")
   * @param {string} [options.site]    this site's registered name (used by startLogin without a
   *                                   redirectUri: the hosted login's `callback=<site>`)
   * @param {string} [options.pricingUrl]  where "upgrade" sends people (default "/pricing")
   * @param {Storage} [options.storage]    where the tokens live (default localStorage)
   */
  constructor({ baseUrl, brand = "svc", site, pricingUrl = "/pricing",
                storage = globalThis.localStorage } = {}) {
    if (!baseUrl) throw new TypeError("SvcAuth: baseUrl is required");
    this.#baseUrl = new URL(baseUrl).href.replace(/\/+$/, "");
    this.#brand = brand;
    this.#site = site;
    this.#pricingUrl = pricingUrl;
    this.#storage = storage;
    this.#accessKey = `${brand}_access_token`;
    this.#refreshKey = `${brand}_refresh_token`;
    this.#pkceKey = `${brand}_pkce`;
    globalThis.addEventListener?.("storage", (event) => this.#onStorage(event));
  }

  /** The access token in storage, "" when there is none. */
  get accessToken() {
    return this.#read(this.#accessKey);
  }

  /** The refresh token in storage, "" when there is none. */
  get refreshToken() {
    return this.#read(this.#refreshKey);
  }

  /**
   * Subscribe to "signedout" (no argument) or "upgrade" (`{status, pricingUrl}`).
   * @returns {() => void} a function that unsubscribes
   */
  on(event, fn) {
    if (!EVENTS.has(event)) throw new TypeError(`SvcAuth: unknown event ${event}`);
    if (typeof fn !== "function") throw new TypeError("SvcAuth: the handler must be a function");
    if (!this.#handlers.has(event)) this.#handlers.set(event, new Set());
    const handlers = this.#handlers.get(event);
    const handler = (detail) => fn(detail); // its own identity: two on() calls, two handlers
    handlers.add(handler);
    return () => handlers.delete(handler);
  }

  /**
   * Sign in with email and password (v1 login). Stores both tokens.
   * @param {object} [options]
   * @param {string} [options.captchaToken]  the captcha widget's token, once the service asked
   *   for one (after recent failed sign-ins); "" or left out: none.
   * @returns {Promise<object|null>} the user; rejects with an Error whose `code` and `status`
   *   come from the service's problem body (e.g. "invalid_credentials", 401). An account with a
   *   second factor cannot sign in here: `code` "mfa_required" (403), with `loginUrl`, the
   *   hosted login; call startLogin() to sign in there, where the second factor is asked for.
   *   With "captcha_required" or "captcha_invalid" (422) the error's `captcha` is
   *   `{provider, siteKey}`: show that provider's widget, then call login() again with its token.
   */
  async login(email, password, { captchaToken = "" } = {}) {
    const response = await this.#post("/api/v1/auth/login",
                                      { email, password, captcha_token: text(captchaToken) });
    const body = await jsonOf(response);
    if (!response.ok) throw problemError(response, body, "login_failed");
    const pair = tokensOf(body);
    if (!pair.access) throw authError("invalid_response", "The login answer has no access token.");
    this.#store(pair);
    return body.user ?? null;
  }

  /**
   * Send the browser to the service's hosted login, with PKCE (S256) and a random state kept in
   * sessionStorage for handleCallback.
   * @param {object} [options]
   * @param {string} [options.redirectUri]  a redirect URI registered for this site; without it
   *   the login names the site (`callback=<site>`) and returns to its first redirect URI
   * @param {string} [options.prompt]  "login" to ask for the password even when the person is
   *   already signed in at the service
   */
  async startLogin({ redirectUri, prompt } = {}) {
    const query = new URLSearchParams();
    if (redirectUri) query.set("redirect_uri", redirectUri);
    else if (this.#site) query.set("callback", this.#site);
    else throw new TypeError("SvcAuth.startLogin: a redirectUri (or the site option) is needed");
    const state = randomToken(24);
    const verifier = randomToken(32); // 43 characters, RFC 7636's minimum length
    query.set("state", state);
    query.set("code_challenge", await s256(verifier));
    query.set("code_challenge_method", "S256");
    if (prompt) query.set("prompt", prompt);
    sessionStorage.setItem(this.#pkceKey,
                           JSON.stringify({ state, verifier, redirectUri: redirectUri || null }));
    location.assign(`${this.#baseUrl}/login?${query}`);
  }

  /**
   * On the redirect URI: check `state`, exchange the code (with the PKCE verifier) for tokens,
   * store them, and take code and state out of the address bar.
   * @returns {Promise<object|null>} the user; rejects with `code` "invalid_state" (no exchange
   *   is tried), the `error` the service sent back (e.g. "access_denied"), or the exchange's.
   */
  async handleCallback() {
    const params = new URLSearchParams(location.search);
    const pending = this.#takePending();
    const clean = new URL(location.href);
    for (const name of ["code", "state", "provider", "error", "error_description"]) {
      clean.searchParams.delete(name);
    }
    history.replaceState(history.state, "", clean.pathname + clean.search + clean.hash);

    const state = params.get("state");
    if (!pending || !state || state !== pending.state) {
      throw authError("invalid_state", "This sign-in was not started here, or it was already used.");
    }
    if (params.get("error")) throw authError(params.get("error"), params.get("error"));
    const code = params.get("code");
    const provider = params.get("provider");
    if (!code || !provider) throw authError("missing_code", "The sign-in returned no code.");

    const request = { code, provider, code_verifier: pending.verifier };
    if (pending.redirectUri) request.redirect_uri = pending.redirectUri;
    const response = await this.#post("/api/v2/auth/exchange-code", request);
    const body = await jsonOf(response);
    if (!response.ok) throw problemError(response, body, "invalid_code");
    const pair = tokensOf(body);
    if (!pair.access) throw authError("invalid_response", "The exchange returned no access token.");
    this.#store(pair);
    return body.user ?? null;
  }

  /**
   * `fetch` with the bearer token (sent only to this page's origin and the service's). On a 401:
   * one refresh, shared with every other call of this tab and the other tabs, then one retry.
   * A 402 or 403 resolves as usual and also fires "upgrade". A body given as a stream cannot be
   * sent twice: pass strings, FormData, Blobs or URLSearchParams.
   * @returns {Promise<Response>}
   */
  async fetch(input, init = undefined) {
    const request = new Request(input, init);
    const carries = this.#mayCarryToken(request.url);
    const used = carries ? this.accessToken : "";
    let response = await this.#send(request, used);
    if (response.status === 401 && carries) {
      const fresh = await this.#tokenAfter401(used);
      if (fresh) response = await this.#send(request, fresh);
    }
    if (response.status === 402 || response.status === 403) {
      this.#emit("upgrade", { status: response.status, pricingUrl: this.#pricingUrl });
    }
    return response;
  }

  /**
   * End this site's session at the service, clear both tokens and fire "signedout"; then, unless
   * `hosted` is false, end the service's own browser session too, so that the next sign-in asks
   * again: the browser goes through the service's sign-out and comes back to `returnTo` (a
   * redirect URI registered for this site; by default the site's first one, as startLogin).
   * A failed logout call is ignored; an expired access token is refreshed once first, so that
   * the session really ends rather than being merely forgotten here.
   * @param {object} [options]
   * @param {boolean} [options.hosted]   also end the service's browser session (default true)
   * @param {string} [options.returnTo]  where the browser comes back to after it
   */
  async signOut({ hosted = true, returnTo } = {}) {
    const query = new URLSearchParams();
    if (returnTo) query.set("redirect_uri", returnTo);
    else if (this.#site) query.set("callback", this.#site);
    else if (hosted) {
      throw new TypeError("SvcAuth.signOut: a returnTo (or the site option) is needed, " +
                          "or { hosted: false }");
    }
    const token = this.accessToken;
    const sid = sessionIdOf(token);
    try {
      const response = token ? await this.#logout(token) : null;
      if (response?.status === 401 && this.refreshToken) {
        const fresh = await this.#tokenAfter401(token);
        if (fresh) await this.#logout(fresh);
      }
    } catch {
      // offline or the service is down: the tokens are dropped here all the same
    }
    this.#signOutHere();
    if (!hosted) return;
    if (sid) query.set("sid", sid);
    location.assign(`${this.#baseUrl}/logout?${query}`);
  }

  #logout(token) {
    return globalThis.fetch(`${this.#baseUrl}/api/v2/auth/logout`, {
      method: "POST", headers: { Authorization: `Bearer ${token}` },
      credentials: "omit", cache: "no-store",
    });
  }

  // -- refresh ----------------------------------------------------------------------------------

  #tokenAfter401(used) {
    const current = this.accessToken;
    if (current && current !== used) return Promise.resolve(current); // refreshed meanwhile
    this.#refreshing ??= this.#refreshOnce().finally(() => { this.#refreshing = null; });
    return this.#refreshing;
  }

  /** The new access token, or "" when there is none to retry with. */
  async #refreshOnce() {
    const failed = this.refreshToken;
    if (!failed) {
      if (this.accessToken) this.#signOutHere(); // a rejected token and nothing to renew it with
      return "";
    }
    const locks = globalThis.navigator?.locks;
    if (!locks?.request) return this.#refreshUnlessRotated(failed, false);
    // No other tab refreshing: go ahead at once. Otherwise wait for its turn to end, and then
    // most likely use what it stored.
    const now = await locks.request(REFRESH_LOCK, { ifAvailable: true },
                                    (lock) => lock && this.#refreshUnlessRotated(failed, false));
    if (now !== null) return now;
    return locks.request(REFRESH_LOCK, () => this.#refreshUnlessRotated(failed, true));
  }

  async #refreshUnlessRotated(failed, waited) {
    // Under the lock: another tab may have refreshed (or signed out) while this one waited.
    // Its writes to local storage reach this tab asynchronously, possibly after the lock does,
    // so after waiting give them a moment to arrive before refreshing a second time.
    const stored = waited ? await this.#refreshTokenOtherThan(failed) : this.refreshToken;
    if (stored !== failed) return stored ? this.accessToken : "";
    let response;
    try {
      response = await this.#post("/api/v1/auth/refresh", { refresh_token: failed });
    } catch {
      return ""; // the network failed, not the token: keep it, the caller gets its 401
    }
    if (response.ok) {
      const pair = tokensOf(await jsonOf(response));
      if (!pair.access) return "";
      this.#store(pair);
      return pair.access;
    }
    if (TRANSIENT.has(response.status) || response.status >= 500) return "";
    this.#signOutHere(); // the service refused the refresh token: this session is over
    return "";
  }

  /** The stored refresh token once it differs from `failed`, or after STORAGE_SETTLE_MS. */
  #refreshTokenOtherThan(failed) {
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        globalThis.removeEventListener?.("storage", onStorage);
        resolve(this.refreshToken);
      };
      const onStorage = (event) => {
        if (event.storageArea === this.#storage && this.refreshToken !== failed) finish();
      };
      const timer = setTimeout(finish, STORAGE_SETTLE_MS);
      globalThis.addEventListener?.("storage", onStorage);
      if (this.refreshToken !== failed) finish();
    });
  }

  // -- storage and events -----------------------------------------------------------------------

  #read(key) {
    try {
      return this.#storage?.getItem(key) ?? "";
    } catch {
      return "";
    }
  }

  #store({ access, refresh }) {
    this.#storage.setItem(this.#accessKey, access);
    if (refresh) this.#storage.setItem(this.#refreshKey, refresh);
    else this.#storage.removeItem(this.#refreshKey);
    this.#signedOutAnnounced = false;
  }

  #signOutHere() {
    this.#storage.removeItem(this.#accessKey);
    this.#storage.removeItem(this.#refreshKey);
    this.#announceSignOut();
  }

  #announceSignOut() {
    if (this.#signedOutAnnounced) return;
    this.#signedOutAnnounced = true;
    this.#emit("signedout");
  }

  #onStorage(event) {
    if (event.storageArea !== this.#storage) return;
    if (event.key !== null && event.key !== this.#accessKey && event.key !== this.#refreshKey) {
      return;
    }
    if (event.key !== null && event.newValue !== null) {
      this.#signedOutAnnounced = false; // another tab signed in or refreshed
    } else if (!this.accessToken && !this.refreshToken) {
      this.#announceSignOut(); // another tab signed out, or its refresh was refused
    }
  }

  #emit(event, detail) {
    for (const handler of [...(this.#handlers.get(event) ?? [])]) {
      try {
        handler(detail);
      } catch (error) {
        report(error);
      }
    }
  }

  // -- requests ---------------------------------------------------------------------------------

  #mayCarryToken(url) {
    const origin = new URL(url, location.href).origin;
    return origin === location.origin || origin === new URL(this.#baseUrl).origin;
  }

  #send(request, token) {
    const headers = new Headers(request.headers);
    if (token) headers.set("Authorization", `Bearer ${token}`);
    return globalThis.fetch(new Request(request.clone(), { headers }));
  }

  #post(path, body) {
    return globalThis.fetch(`${this.#baseUrl}${path}`, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body), credentials: "omit", cache: "no-store",
    });
  }

  #takePending() {
    try {
      const raw = sessionStorage.getItem(this.#pkceKey);
      sessionStorage.removeItem(this.#pkceKey); // single use, whatever happens next
      const pending = raw ? JSON.parse(raw) : null;
      return pending && typeof pending.state === "string" && typeof pending.verifier === "string"
        ? pending : null;
    } catch {
      return null;
    }
  }
}
