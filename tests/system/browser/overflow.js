// What does not fit on a hosted page (tests/system/browser/test_page_matrix.py), as a list of what and
// where: text cut in a box that hides or scrolls its overflow, a button's or field's text cut, text
// past the edge of the block it is in (a long word that does not wrap), and with `phone` anything
// past the viewport's edges. Evaluated as a function: page.evaluate(source, phone).
(phone) => {
  const found = [];
  const viewport = document.documentElement.clientWidth;
  const name = (el) => {
    const classes = typeof el.className === "string" && el.className.trim()
      ? "." + el.className.trim().split(/\s+/).join(".") : "";
    const text = (el.innerText || el.value || el.getAttribute("aria-label") || "").trim();
    return `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}${classes} "${text.slice(0, 50)}"`;
  };
  const shown = (el) => el.getClientRects().length > 0
    && getComputedStyle(el).visibility !== "hidden" && !el.closest(".visually-hidden, svg");
  const block = (el) => {
    while (el.parentElement && getComputedStyle(el).display.startsWith("inline")) el = el.parentElement;
    return el;
  };
  for (const el of document.body.querySelectorAll("*")) {
    if (!shown(el) || el.matches("option, optgroup")) continue;
    const style = getComputedStyle(el);
    const clips = /hidden|auto|scroll|clip/.test(style.overflowX);
    const control = el.matches("button, input, select, textarea, a.button");
    if ((clips || control) && el.scrollWidth > el.clientWidth + 1) {
      found.push(`cut (${el.scrollWidth} > ${el.clientWidth} px): ${name(el)}`);
    }
    const box = el.getBoundingClientRect();
    if (phone && (box.right > viewport + 1 || box.left < -1)) {
      found.push(`past the viewport (${Math.round(box.left)}..${Math.round(box.right)} of ${viewport} px): ${name(el)}`);
    }
  }
  // Text past the edge of the block it is in (a long word that does not wrap).
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!node.textContent.trim() || !parent || !shown(parent) || parent.closest("select")) continue;
    const edge = block(parent).getBoundingClientRect();
    range.selectNodeContents(node);
    for (const line of range.getClientRects()) {
      if (line.right > edge.right + 1 || line.left < edge.left - 1) {
        found.push(`text past its box (${Math.round(line.right)} > ${Math.round(edge.right)} px): ${name(block(parent))}`);
        break;
      }
    }
  }
  if (document.documentElement.scrollWidth > viewport) {
    found.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} > ${viewport} px`);
  }
  return [...new Set(found)];
}
