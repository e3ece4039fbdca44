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

  // Styles that only make sense with this script (the drop zone hides the native file input).
  document.documentElement.classList.add('js');

  var lang = document.documentElement.lang || 'es';
  function number(n) {
    try {
      return Number(n).toLocaleString(lang === 'es' ? 'es-ES' : 'en-GB');
    } catch (e) {
      return String(n);
    }
  }

  function bytes(n) {
    var units = ['B', 'KB', 'MB', 'GB'];
    var value = n;
    var unit = 0;
    while (value >= 1024 && unit < units.length - 1) {
      value /= 1024;
      unit++;
    }
    return number(unit === 0 ? value : Math.round(value * 10) / 10) + ' ' + units[unit];
  }

  // The steps of an upload: waiting, active, done, held or failed, each with an optional count.
  function setStep(name, state, count) {
    var step = document.querySelector('[data-step="' + name + '"]');
    if (!step) return;
    step.setAttribute('data-state', state);
    if (count !== undefined) {
      var out = step.querySelector('[data-step-count]');
      if (out) out.textContent = count;
    }
  }

  function setText(id, text) {
    var el = document.getElementById(id);
    if (el && el.textContent !== text) el.textContent = text;
  }

  // Follows an import by polling its JSON status; at the end, calls `finished` with it (which shows the report).
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
            var report = job.report || {};
            setStep('read', job.status === 'failed' ? 'failed' : 'done', fill(messages.msgReadCount, { rows: number(job.rows_read) }));
            if (job.status === 'succeeded') {
              if (bar) bar.value = 100;
              setStep('publish', 'done', fill(messages.msgPublished, {
                inserted: number(report.inserted || 0), updated: number(report.updated || 0), deleted: number(report.deleted || 0),
              }));
            } else if (job.status === 'awaiting_confirmation') {
              // Held, not finished: nothing is published until someone decides.
              setStep('publish', 'held', messages.msgHeld);
            } else {
              setStep('publish', 'failed', messages.msgFailed);
            }
            setText('import-status', job.status === 'awaiting_confirmation' ? messages.msgHeld : messages.msgDone);
            finished(job);
            return;
          }
          if (job.status === 'running') {
            var percent = job.size_bytes > 0 ? Math.min(99, Math.floor((100 * job.bytes_read) / job.size_bytes)) : 0;
            if (bar) bar.value = percent;
            setStep('read', 'active', fill(messages.msgReadCount, { rows: number(job.rows_read) }));
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
      var uploadBar = document.getElementById('import-progress');
      var lastStep = -1;
      form.querySelector('[data-progress]').hidden = false;
      setStep('upload', 'active', bytes(file.size));
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
          setText('import-status', fill(messages.msgUploading, { percent: percent }));
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
          uploadBar.value = 0;
          setStep('upload', 'done');
          setText('import-status', messages.msgUploaded);
          watchImport(body.status_url, messages, function (job) {
            // The steps stay in view with their counts; the full report (or, for a held import, the decision) is one click away.
            var link = document.getElementById('report-link');
            if (link) {
              var held = job.status === 'awaiting_confirmation';
              link.href = body.page_url + (held ? '#held' : '#report');
              if (held) setText('report-link-text', messages.msgDecide);
              link.hidden = false;
              link.focus();
            }
            button.disabled = false;
          });
          return;
        }
        button.disabled = false;
        setStep('upload', 'failed');
        showError(errorBox, fill(messages.msgUploadFailed, { reason: (body && body.message) || xhr.status + ' ' + xhr.statusText }));
      });
      xhr.addEventListener('error', function () {
        button.disabled = false;
        showError(errorBox, fill(messages.msgUploadFailed, { reason: 'network error' }));
      });
      xhr.send(data);
    });
  }

  // The drop zone: the file input itself, under a visible text; a dropped file is put in it.
  var drop = document.querySelector('[data-drop]');
  if (drop) {
    var dropInput = drop.querySelector('input[type=file]');
    var dropName = drop.querySelector('[data-drop-file]');
    var chosen = form ? form.dataset.msgChosen : '';
    var showChosen = function () {
      var f = dropInput.files && dropInput.files[0];
      dropName.textContent = f ? fill(chosen, { name: f.name, size: bytes(f.size) }) : '';
    };
    dropInput.addEventListener('change', showChosen);
    ['dragenter', 'dragover'].forEach(function (type) {
      drop.addEventListener(type, function (event) {
        event.preventDefault();
        drop.classList.add('dragging');
      });
    });
    ['dragleave', 'drop'].forEach(function (type) {
      drop.addEventListener(type, function () {
        drop.classList.remove('dragging');
      });
    });
    drop.addEventListener('drop', function (event) {
      event.preventDefault();
      if (event.dataTransfer && event.dataTransfer.files.length > 0) {
        dropInput.files = event.dataTransfer.files;
        showChosen();
      }
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
