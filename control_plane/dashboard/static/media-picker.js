// The editor's media picker: the panel is server-rendered (htmx swaps it in beside the body); this only shows
// its Insert buttons, puts a file's embed code at the body's cursor and tells htmx the body changed, so the
// preview follows. Without it the panel is a page of embed codes to copy.
(function () {
  "use strict";
  function body() {
    var field = document.getElementById("body");
    return field && !field.disabled && typeof field.setRangeText === "function" ? field : null;
  }

  function close(panel) {
    panel.textContent = "";
    var opener = document.querySelector("[data-picker-open]");
    if (opener) opener.focus();
  }

  document.addEventListener("htmx:load", function (event) {
    if (!body()) return;
    event.target.querySelectorAll("button[data-embed]").forEach(function (button) {
      button.hidden = false;
    });
  });

  document.addEventListener("click", function (event) {
    var panel = document.getElementById("media-picker");
    var target = event.target instanceof Element ? event.target : null;
    if (!panel || !target || !panel.contains(target)) return;
    if (target.closest("[data-picker-close]")) {
      close(panel);
      return;
    }
    var button = target.closest("button[data-embed]");
    var field = body();
    if (!button || !field) return;
    // The body keeps its selection while the panel has focus: the code replaces it, the cursor lands after.
    field.setRangeText(button.getAttribute("data-embed"), field.selectionStart, field.selectionEnd, "end");
    field.focus();
    field.dispatchEvent(new Event("input", { bubbles: true }));
    var status = panel.querySelector("[data-picker-status]");
    if (status) status.textContent = "Inserted “" + button.getAttribute("data-name") + "” into the body.";
  });

  document.addEventListener("keydown", function (event) {
    var panel = document.getElementById("media-picker");
    if (event.key === "Escape" && panel && panel.contains(document.activeElement)) close(panel);
  });
})();
