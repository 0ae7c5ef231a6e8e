// "Show" beside each password field of the hosted pages: the page works without it, and the
// button only switches the field between hidden and shown text. Its words come from the page
// (data-show / data-hide on this script's tag), so they follow the page's language.
(function () {
  "use strict";
  var script = document.currentScript;
  var show = (script && script.dataset.show) || "Show";
  var hide = (script && script.dataset.hide) || "Hide";
  document.querySelectorAll('input[type="password"]:not([data-toggle])').forEach(function (input) {
    input.setAttribute("data-toggle", "");
    var button = document.createElement("button");
    button.type = "button";
    button.className = "show-password";
    button.textContent = show;
    if (input.id) button.setAttribute("aria-controls", input.id);
    button.addEventListener("click", function () {
      var shown = input.type === "text";
      input.type = shown ? "password" : "text";
      button.textContent = shown ? show : hide;
    });
    input.insertAdjacentElement("afterend", button);
  });
})();
