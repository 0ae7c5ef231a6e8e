// The show-password buttons of the hosted pages (templates/_forms.html, `show_password`): each is
// rendered hidden beside its field, already in the page's language; this script shows it and makes
// it switch the field between hidden and shown text. The button says what it will do: "Show
// password" while hidden, "Hide password" (its data-hide) while shown. Its name changes, so it has
// no aria-pressed (a pressed "Hide password" would say the state twice, and contradict itself).
// Without this script no button appears and every form works as before.
(function () {
  "use strict";

  function wire(button) {
    const input = document.getElementById(button.getAttribute("aria-controls"));
    if (!input || input.type !== "password") return;
    const showWords = button.textContent;
    const hideWords = button.getAttribute("data-hide") || showWords;

    function show(shown) {
      input.type = shown ? "text" : "password";
      button.textContent = shown ? hideWords : showWords;
      button.toggleAttribute("data-shown", shown);  // for the style sheet
    }

    button.addEventListener("click", function () { show(input.type === "password"); });
    // Sent as a password field, so the browser's password manager sees a password.
    if (input.form) input.form.addEventListener("submit", function () { show(false); });
    button.hidden = false;
  }

  document.querySelectorAll("button.show-password[aria-controls]").forEach(wire);
})();
