// Passkeys on the hosted pages (WebAuthn). Each form marked data-passkey asks the service for a
// ceremony's options (POST to its data-options, with the form's CSRF token), runs the ceremony in
// the browser, and submits the browser's answer as the form's `credential` field. The server
// checks everything (app/domain/factors/passkeys.py); this script only carries bytes.
// Without WebAuthn the forms stay hidden, and every other way in works as before.
(function () {
  "use strict";
  if (!window.PublicKeyCredential || !navigator.credentials) return;

  function toBytes(base64url) {
    const base64 = base64url.replace(/-/g, "+").replace(/_/g, "/");
    const binary = atob(base64 + "===".slice((base64.length + 3) % 4));
    return Uint8Array.from(binary, function (c) { return c.charCodeAt(0); });
  }

  function toBase64url(buffer) {
    const bytes = new Uint8Array(buffer);
    let binary = "";
    for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function withIds(descriptors) {
    return (descriptors || []).map(function (d) { return Object.assign({}, d, {id: toBytes(d.id)}); });
  }

  function creationOptions(json) {
    return Object.assign({}, json, {
      challenge: toBytes(json.challenge),
      user: Object.assign({}, json.user, {id: toBytes(json.user.id)}),
      excludeCredentials: withIds(json.excludeCredentials),
    });
  }

  function requestOptions(json) {
    return Object.assign({}, json, {
      challenge: toBytes(json.challenge),
      allowCredentials: withIds(json.allowCredentials),
    });
  }

  // The answer in WebAuthn's JSON form, as py_webauthn reads it.
  function answerJSON(credential) {
    const r = credential.response;
    const response = {clientDataJSON: toBase64url(r.clientDataJSON)};
    if (r.attestationObject) {
      response.attestationObject = toBase64url(r.attestationObject);
      response.transports = r.getTransports ? r.getTransports() : [];
    } else {
      response.authenticatorData = toBase64url(r.authenticatorData);
      response.signature = toBase64url(r.signature);
      if (r.userHandle) response.userHandle = toBase64url(r.userHandle);
    }
    return JSON.stringify({
      id: credential.id, rawId: toBase64url(credential.rawId), type: credential.type,
      response: response, authenticatorAttachment: credential.authenticatorAttachment || null,
      clientExtensionResults: credential.getClientExtensionResults(),
    });
  }

  function say(form, message) {
    const out = form.querySelector("[data-passkey-message]");
    out.textContent = message;
    out.hidden = !message;
  }

  async function optionsFor(form) {
    const response = await fetch(form.dataset.options, {
      method: "POST", credentials: "same-origin",
      headers: {"X-CSRFToken": form.elements.csrf_token.value},
    });
    const body = await response.json().catch(function () { return {}; });
    if (!response.ok) throw new Error(body.error || "Passkeys are unavailable just now. Try again.");
    return body;
  }

  async function ceremony(form, extra) {
    const options = await optionsFor(form);
    if (form.dataset.passkey === "register") {
      return navigator.credentials.create({publicKey: creationOptions(options)});
    }
    return navigator.credentials.get(Object.assign({publicKey: requestOptions(options)}, extra));
  }

  function submitWith(form, credential) {
    form.elements.credential.value = answerJSON(credential);
    form.submit();
  }

  // The login page offers passkeys in the email field's suggestions (conditional mediation);
  // that request waits in the background, and a click on the button cancels it first.
  let waiting = null;

  function problem(error) {
    if (error && error.name === "NotAllowedError") return "No passkey was used. Try again, or sign in another way.";
    if (error && error.name === "InvalidStateError") return "This passkey is registered already.";
    return (error && error.message) || "The passkey did not work. Try again.";
  }

  document.querySelectorAll("form[data-passkey]").forEach(function (form) {
    form.hidden = false;
    form.addEventListener("submit", async function (event) {
      event.preventDefault();
      say(form, "");
      if (waiting) waiting.abort();
      try {
        submitWith(form, await ceremony(form, {}));
      } catch (error) {
        say(form, problem(error));
      }
    });
  });

  const signIn = document.querySelector("form[data-passkey=sign-in]");
  if (signIn && PublicKeyCredential.isConditionalMediationAvailable) {
    PublicKeyCredential.isConditionalMediationAvailable().then(async function (available) {
      if (!available) return;
      waiting = new AbortController();
      try {
        submitWith(signIn, await ceremony(signIn, {mediation: "conditional", signal: waiting.signal}));
      } catch (error) {
        // Nobody asked for this one: it fails quietly (a click on the button says why).
      }
    });
  }
})();
