// Mirador panel: the one client script. Every page works without it; it adds
// upload and import progress, and copy buttons. Served as a file because the
// panel's Content-Security-Policy allows no inline script at all. Texts come
// from data-msg-* attributes written (and escaped) by the server, and
// anything shown is set with textContent, never as HTML.
(function () {
  'use strict';

  function fill(template, params) {
    return String(template || '').replace(/\{(\w+)\}/g, function (m, name) {
      return Object.prototype.hasOwnProperty.call(params, name) ? String(params[name]) : m;
    });
  }

  var lang = document.documentElement.lang || 'es';
  function number(n) {
    try {
      return Number(n).toLocaleString(lang === 'es' ? 'es-ES' : 'en-GB');
    } catch (e) {
      return String(n);
    }
  }

  function setText(id, text) {
    var el = document.getElementById(id);
    if (el && el.textContent !== text) el.textContent = text;
  }

  // Follows an import by polling its JSON status; at the end, calls `finished` (which shows the report).
  function watchImport(statusUrl, messages, finished) {
    var bar = document.getElementById('import-progress');
    var lastStep = -1;
    function poll() {
      fetch(statusUrl, { headers: { Accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' })
        .then(function (response) {
          if (!response.ok) throw new Error(String(response.status));
          return response.json();
        })
        .then(function (body) {
          var job = body.import;
          if (job.done) {
            if (bar) bar.value = 100;
            setText('import-status', messages.msgDone);
            finished();
            return;
          }
          if (job.status === 'running') {
            var percent = job.size_bytes > 0 ? Math.min(99, Math.floor((100 * job.bytes_read) / job.size_bytes)) : 0;
            if (bar) bar.value = percent;
            // The live region is updated every 10 %, not at every poll: screen readers would chatter.
            var step = Math.floor(percent / 10);
            if (step !== lastStep) {
              lastStep = step;
              setText('import-status', fill(messages.msgRunning, { rows: number(job.rows_read), percent: percent }));
            }
          } else {
            if (bar) bar.removeAttribute('value');
            setText('import-status', messages.msgWaiting);
          }
          window.setTimeout(poll, 600);
        })
        .catch(function () {
          window.setTimeout(poll, 2000);
        });
    }
    poll();
  }

  function showError(box, text) {
    if (!box) return;
    box.textContent = text;
    box.hidden = false;
  }

  var form = document.getElementById('upload-form');
  if (form) {
    var messages = form.dataset;
    form.addEventListener('submit', function (event) {
      var input = form.querySelector('input[type=file]');
      var errorBox = document.getElementById('upload-error');
      var button = form.querySelector('button[type=submit]');
      var file = input && input.files && input.files[0];
      if (errorBox) errorBox.hidden = true;
      event.preventDefault();
      if (!file) {
        showError(errorBox, messages.msgChoose);
        input.focus();
        return;
      }
      if (file.size > Number(messages.maxBytes)) {
        showError(errorBox, messages.msgTooLarge);
        return;
      }
      var data = new FormData(form);
      var xhr = new XMLHttpRequest();
      var uploadBar = document.getElementById('upload-progress');
      var lastStep = -1;
      form.querySelector('[data-progress]').hidden = false;
      button.disabled = true;
      xhr.open('POST', form.action);
      xhr.setRequestHeader('Accept', 'application/json');
      xhr.setRequestHeader('X-CSRF-Token', String(data.get('_csrf') || ''));
      xhr.upload.addEventListener('progress', function (e) {
        if (!e.lengthComputable) return;
        var percent = Math.floor((100 * e.loaded) / e.total);
        uploadBar.value = percent;
        var step = Math.floor(percent / 10);
        if (step !== lastStep) {
          lastStep = step;
          setText('upload-status', fill(messages.msgUploading, { percent: percent }));
        }
      });
      xhr.addEventListener('load', function () {
        var body = null;
        try {
          body = JSON.parse(xhr.responseText);
        } catch (e) {
          body = null;
        }
        if (xhr.status === 201 && body && body.ok) {
          uploadBar.value = 100;
          setText('upload-status', messages.msgUploaded);
          watchImport(body.status_url, messages, function () {
            window.location.assign(body.page_url + '#report');
          });
          return;
        }
        button.disabled = false;
        showError(errorBox, fill(messages.msgUploadFailed, { reason: (body && body.message) || xhr.status + ' ' + xhr.statusText }));
      });
      xhr.addEventListener('error', function () {
        button.disabled = false;
        showError(errorBox, fill(messages.msgUploadFailed, { reason: 'network error' }));
      });
      xhr.send(data);
    });
  }

  var watcher = document.getElementById('import-watch');
  if (watcher) {
    // The import page shows the report once reloaded.
    watchImport(watcher.dataset.statusUrl, watcher.dataset, function () {
      window.location.reload();
    });
  }

  // Copy buttons: the Clipboard API, else selecting the text and execCommand.
  Array.prototype.forEach.call(document.querySelectorAll('button[data-copy]'), function (button) {
    button.addEventListener('click', function () {
      var id = button.getAttribute('data-copy');
      var field = document.getElementById(id);
      var status = document.querySelector('[data-copy-status="' + id + '"]');
      function done(ok) {
        if (status) status.textContent = ok ? button.dataset.msgCopied : button.dataset.msgCopyFailed;
      }
      function fallback() {
        field.focus();
        field.select();
        var ok = false;
        try {
          ok = document.execCommand('copy');
        } catch (e) {
          ok = false;
        }
        done(ok);
      }
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(field.value).then(function () {
          done(true);
        }, fallback);
      } else {
        fallback();
      }
    });
  });
})();
