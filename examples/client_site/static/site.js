// The example site's page script. It uses only the service's browser client (svc-auth.js),
// imported as a module from the service's origin, the way every client site should.
const config = document.body.dataset;
const { SvcAuth } = await import(new URL("/static/svc-auth.js", config.serviceUrl).href);

const auth = new SvcAuth({
  baseUrl: config.serviceUrl, brand: config.brand, site: config.site,
  pricingUrl: config.pricingUrl,
});
const $ = (id) => document.getElementById(id);

function showSignedIn(signedIn, label = "Signed in") {
  $("who").textContent = signedIn ? label : "Signed out";
  if (!$("signed-in")) return;
  $("signed-in").hidden = !signedIn;
  $("signed-out").hidden = signedIn;
  if (!signedIn) $("upgrade").hidden = true;
}

auth.on("signedout", () => showSignedIn(false));
auth.on("upgrade", ({ pricingUrl }) => {
  if (!$("upgrade")) return;
  $("pricing-link").href = pricingUrl;
  $("upgrade").hidden = false;
});

// The captcha the service asks for after failed sign-ins (the error's `captcha`): each
// provider's widget script, the element it turns into a widget, and the field it fills in.
const CAPTCHA = {
  turnstile: ["https://challenges.cloudflare.com/turnstile/v0/api.js", "cf-turnstile",
              "cf-turnstile-response"],
  hcaptcha: ["https://js.hcaptcha.com/1/api.js", "h-captcha", "h-captcha-response"],
  recaptcha: ["https://www.google.com/recaptcha/api.js", "g-recaptcha", "g-recaptcha-response"],
};
let captchaField = null;
let lastCaptcha = null;

function showCaptcha(asked) {
  const known = CAPTCHA[asked.provider];
  if (!known) return;
  lastCaptcha = asked;
  const [script, widgetClass, field] = known;
  const widget = document.createElement("div");
  widget.className = widgetClass;
  widget.dataset.sitekey = asked.siteKey;
  const loader = document.createElement("script");
  loader.src = config.captchaScript || script;
  loader.async = true;
  $("captcha").replaceChildren(widget, loader); // a fresh widget: a token is good once
  $("captcha").hidden = false;
  captchaField = field;
}

function captchaToken() {
  const field = captchaField && $("signin-form").querySelector(`[name="${captchaField}"]`);
  return field ? field.value : "";
}

async function completeSignIn() {
  try {
    await auth.handleCallback();
    location.replace("/");
  } catch (error) {
    $("callback-error").textContent = `Sign-in failed: ${error.message}`;
    $("callback-error").hidden = false;
  }
}

function wireHome() {
  showSignedIn(Boolean(auth.accessToken || auth.refreshToken));

  $("signin-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("signin-error").hidden = true;
    try {
      const user = await auth.login($("email").value, $("password").value,
                                    { captchaToken: captchaToken() });
      $("captcha").hidden = true;
      captchaField = lastCaptcha = null;
      showSignedIn(true, `Signed in as ${user?.email ?? "you"}`);
    } catch (error) {
      $("signin-error").textContent = error.code === "mfa_required"
        ? "Your account asks for a second factor: use “Sign in with the service” below."
        : error.message;
      $("signin-error").hidden = false;
      // Asked for a captcha, or one was spent on this try: a fresh widget for the next.
      if (error.captcha || lastCaptcha) showCaptcha(error.captcha ?? lastCaptcha);
    }
  });

  $("start-login").addEventListener("click", () => {
    auth.startLogin({ redirectUri: config.redirectUri });
  });

  $("generate").addEventListener("click", async () => {
    $("upgrade").hidden = true;
    $("result").textContent = "Generating…";
    const response = await auth.fetch("/api/generate", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ prompt: $("prompt").value }),
    });
    if (response.ok) {
      const made = await response.json();
      $("result").textContent = made.name;
    } else if (response.status === 402 || response.status === 403) {
      $("result").textContent = ""; // the "upgrade" event shows the way out
    } else if (response.status === 401) {
      $("result").textContent = "Please sign in again.";
    } else {
      $("result").textContent = `Generation failed (${response.status}).`;
    }
  });

  $("sign-out").addEventListener("click", () => auth.signOut());
}

if (config.page === "callback") await completeSignIn();
else if (config.page === "home") wireHome();
else showSignedIn(Boolean(auth.accessToken || auth.refreshToken));
document.body.dataset.ready = "true";
