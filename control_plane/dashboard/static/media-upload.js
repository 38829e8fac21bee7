// The media library's upload form, enhanced: drop files on it (or choose them) and each is sent on its own
// with a progress bar; the server's answer (the same form POST as without JavaScript) decides what is shown.
// Without this script the form posts one file the ordinary way.
(function () {
  "use strict";
  function setup(form) {
    var input = form.querySelector('input[type="file"]');
    var zone = form.querySelector("[data-dropzone]");
    var list = form.querySelector("[data-progress]");
    if (!input || !zone || !list || !window.FormData || !window.XMLHttpRequest) return;
    input.multiple = true;
    var csrf = form.querySelector('input[name="csrf_token"]').value;
    var failed = 0;
    var pending = 0;

    function row(file) {
      var item = document.createElement("li");
      var label = document.createElement("span");
      label.textContent = file.name + " ";
      var bar = document.createElement("progress");
      bar.max = 100;
      bar.value = 0;
      bar.setAttribute("aria-label", "Uploading " + file.name);
      var state = document.createElement("span");
      state.className = "small muted";
      item.appendChild(label);
      item.appendChild(bar);
      item.appendChild(state);
      list.appendChild(item);
      return { bar: bar, state: state };
    }

    function why(html) {
      // The refused page's own error flash, in words (never its markup).
      var doc = new DOMParser().parseFromString(html, "text/html");
      var flash = doc.querySelector(".flash-error");
      return flash ? flash.textContent.replace(/\s+/g, " ").trim() : "The upload was refused.";
    }

    function done() {
      pending -= 1;
      if (pending === 0 && failed === 0) window.location.assign(form.action);
    }

    function send(file) {
      var shown = row(file);
      var body = new FormData();
      body.append("csrf_token", csrf);
      body.append("file", file, file.name);
      var xhr = new XMLHttpRequest();
      xhr.open("POST", form.action);
      xhr.upload.addEventListener("progress", function (event) {
        if (event.lengthComputable) shown.bar.value = Math.round((100 * event.loaded) / event.total);
      });
      xhr.addEventListener("load", function () {
        if (xhr.status >= 200 && xhr.status < 400) {
          shown.bar.value = 100;
          shown.state.textContent = "uploaded";
        } else {
          failed += 1;
          shown.state.textContent = why(xhr.responseText);
          shown.state.setAttribute("role", "alert");
        }
        done();
      });
      xhr.addEventListener("error", function () {
        failed += 1;
        shown.state.textContent = "The connection failed; try again.";
        shown.state.setAttribute("role", "alert");
        done();
      });
      xhr.send(body);
    }

    function upload(files) {
      failed = 0;
      list.textContent = "";
      pending = files.length;
      for (var i = 0; i < files.length; i += 1) send(files[i]);
    }

    form.addEventListener("submit", function (event) {
      if (!input.files || input.files.length === 0) return;
      event.preventDefault();
      upload(input.files);
    });
    ["dragenter", "dragover"].forEach(function (name) {
      zone.addEventListener(name, function (event) {
        event.preventDefault();
        zone.classList.add("dragging");
      });
    });
    ["dragleave", "drop"].forEach(function (name) {
      zone.addEventListener(name, function () {
        zone.classList.remove("dragging");
      });
    });
    zone.addEventListener("drop", function (event) {
      event.preventDefault();
      if (event.dataTransfer && event.dataTransfer.files.length) upload(event.dataTransfer.files);
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form[data-upload]").forEach(setup);
  });
})();
