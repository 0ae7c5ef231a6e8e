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
      const user = await auth.login($("email").value, $("password").value);
      showSignedIn(true, `Signed in as ${user?.email ?? "you"}`);
    } catch (error) {
      $("signin-error").textContent = error.code === "mfa_required"
        ? "Your account asks for a second factor: use “Sign in with the service” below."
        : error.message;
      $("signin-error").hidden = false;
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
