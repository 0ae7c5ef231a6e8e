// The recovery codes' copy button (templates/pages/recovery_codes.html): rendered hidden, with its
// words in the page's language (data-copied, data-copy-failed); this script shows it where the
// browser has a clipboard and puts the codes there, one a line, as the downloaded file has them.
// The status beside it (role="status") says what happened. Without this script the codes stay
// selectable text and the download works.
(function () {
  "use strict";
  if (!navigator.clipboard || !window.isSecureContext) return;

  function wire(button) {
    const list = document.getElementById(button.dataset.copyCodes);
    const status = document.getElementById(button.dataset.status);
    if (!list || !status) return;

    function say(text) {
      status.textContent = "";  // emptied first, so the same words are announced again
      window.setTimeout(function () { status.textContent = text; }, 50);
    }

    button.addEventListener("click", function () {
      const codes = Array.from(list.querySelectorAll("code"), function (code) {
        return code.textContent.trim();
      });
      navigator.clipboard.writeText(codes.join("\n") + "\n").then(
        function () { say(button.dataset.copied); },
        function () {  // selected, so copying them by hand is one keystroke away
          window.getSelection().selectAllChildren(list);
          say(button.dataset.copyFailed);
        });
    });
    button.hidden = false;
  }

  document.querySelectorAll("button[data-copy-codes]").forEach(wire);
})();
