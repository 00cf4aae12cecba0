// memoracle ui: progressive enhancement only; every page works without it.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // A filter's select submits its form when changed.
  for (const select of document.querySelectorAll("select[data-autosubmit]")) {
    select.addEventListener("change", () => select.form.requestSubmit());
  }
  // "/" focuses the page's first search box, as on most sites.
  document.addEventListener("keydown", (event) => {
    const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName);
    if (event.key === "/" && !typing) {
      const box = document.querySelector("input[type=search]");
      if (box) { event.preventDefault(); box.focus(); }
    }
  });
  // A form submitted once is not submitted twice by a double click.
  for (const form of document.querySelectorAll("form[method=post]")) {
    form.addEventListener("submit", () => {
      setTimeout(() => form.querySelectorAll("button").forEach((b) => { b.disabled = true; }), 0);
    });
  }
});
