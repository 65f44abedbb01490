// SPDX-License-Identifier: Apache-2.0
// The web UI's main module: upload (drag and drop or file picker), progress per page, and the
// result views (rendered Markdown, raw Markdown, JSON, page previews with layout boxes, ZIP);
// the header names the server's model and MinerU profile. The chat panel is chat.js; the API
// calls are api.js.
import {
  describeModel,
  errorOf,
  getResult,
  imageUrl,
  isFinal,
  modelInfo,
  pageUrl,
  submitDocument,
  watchTask,
  zipUrl,
} from './api.js';
import { apiFetch, apiKey, authorizeImages, forgetResources } from './auth.js';
import { ChatPanel } from './chat.js';
import { renderMarkdown } from './markdown.js';
import { renderPages } from './pages.js';

const $ = (id) => document.getElementById(id);

const ui = {
  serverModel: $('server-model'),
  dropZone: $('drop-zone'),
  fileInput: $('file-input'),
  formula: $('opt-formula'),
  table: $('opt-table'),
  progressBox: $('progress-box'),
  status: $('status'),
  progress: $('progress'),
  pageProgress: $('page-progress'),
  error: $('error'),
  result: $('result'),
  docSelectLabel: $('doc-select-label'),
  docSelect: $('doc-select'),
  zipLink: $('zip-link'),
  tabs: [...document.querySelectorAll('[role="tab"]')],
  rendered: $('panel-rendered'),
  markdownRaw: $('markdown-raw'),
  jsonSelect: $('json-select'),
  jsonRaw: $('json-raw'),
  boxesSelect: $('boxes-select'),
  legend: $('legend'),
  pages: $('pages'),
};

const chat = new ChatPanel();

// What is shown: the task and its result ({documents: [...]}), and the document picked.
const state = { taskId: null, result: null, doc: 0, busy: false };

function showError(message) {
  ui.error.textContent = message;
  ui.error.hidden = !message;
}

// ---- Header: the model and the MinerU profile (2509 or pro) the server runs -------------------

async function showServerModel() {
  try {
    const described = describeModel(await modelInfo());
    if (!described) return;
    ui.serverModel.textContent = described.text;
    ui.serverModel.title = described.title;
    ui.serverModel.dataset.profile = described.profile;
    ui.serverModel.hidden = false;
  } catch {
    // An older or unreachable server: the header just does not say.
  }
}
showServerModel();

// ---- Upload ------------------------------------------------------------------------------

const ACCEPTED = /^(application\/pdf|image\/)/;

function isAccepted(file) {
  return ACCEPTED.test(file.type) || /\.(pdf|png|jpe?g|webp|tiff?|gif|bmp)$/i.test(file.name);
}

async function upload(file) {
  if (state.busy) return;
  if (!isAccepted(file)) {
    showError(`${file.name}: not a PDF or an image`);
    return;
  }
  state.busy = true;
  ui.dropZone.setAttribute('aria-disabled', 'true');
  showError('');
  ui.result.hidden = true;
  ui.progressBox.hidden = false;
  ui.pageProgress.replaceChildren();
  ui.progress.removeAttribute('value'); // indeterminate until the first progress report
  ui.status.textContent = `Uploading ${file.name}…`;
  try {
    const task = await submitDocument(file, {
      formulaEnable: ui.formula.checked,
      tableEnable: ui.table.checked,
    });
    state.taskId = task.task_id;
    showProgress(task);
    const final = await watchTask(task.task_id, showProgress);
    if (final.status !== 'completed') {
      throw new Error(final.error || `the task was ${final.status}`);
    }
    ui.status.textContent = 'Loading the result…';
    showResult(task.task_id, await getResult(task.task_id));
    ui.status.textContent = `Done: ${file.name}`;
  } catch (err) {
    ui.status.textContent = `Failed: ${file.name}`;
    showError(err.message || String(err));
  } finally {
    state.busy = false;
    ui.dropZone.removeAttribute('aria-disabled');
  }
}

// Status line, progress bar and one cell per page (done / pending).
function showProgress(task) {
  const p = task.progress || {};
  const total = Number(p.pages_total) || 0;
  const done = Math.min(Number(p.pages_done) || 0, total);
  if (task.status === 'pending') {
    const ahead = Number(task.queued_ahead) || 0;
    ui.status.textContent = ahead > 0 ? `Queued (${ahead} ahead)…` : 'Queued…';
  } else if (!isFinal(task.status)) {
    ui.status.textContent = total > 0 ? `Page ${done} of ${total} done` : 'Processing…';
  } else {
    ui.status.textContent = `${task.status[0].toUpperCase()}${task.status.slice(1)}: ` +
      `${done} of ${total} page${total === 1 ? '' : 's'}`;
  }
  if (total > 0) {
    ui.progress.max = total;
    ui.progress.value = done;
  }
  if (ui.pageProgress.children.length !== total) {
    ui.pageProgress.replaceChildren();
    for (let i = 0; i < total; i++) {
      const li = document.createElement('li');
      li.textContent = String(i + 1);
      ui.pageProgress.append(li);
    }
  }
  [...ui.pageProgress.children].forEach((li, i) => {
    li.classList.toggle('done', i < done);
    li.title = `Page ${i + 1}: ${i < done ? 'done' : 'waiting'}`;
  });
}

ui.dropZone.addEventListener('click', () => ui.fileInput.click());
ui.dropZone.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' || event.key === ' ') {
    event.preventDefault();
    ui.fileInput.click();
  }
});
ui.fileInput.addEventListener('change', () => {
  const file = ui.fileInput.files[0];
  ui.fileInput.value = ''; // picking the same file again still fires "change"
  if (file) upload(file);
});
for (const type of ['dragenter', 'dragover']) {
  ui.dropZone.addEventListener(type, (event) => {
    event.preventDefault();
    ui.dropZone.classList.add('dragging');
  });
}
for (const type of ['dragleave', 'drop']) {
  ui.dropZone.addEventListener(type, () => ui.dropZone.classList.remove('dragging'));
}
ui.dropZone.addEventListener('drop', (event) => {
  event.preventDefault();
  const file = event.dataTransfer.files[0];
  if (file) upload(file);
});
// A file dropped next to the zone must not make the browser navigate away to it.
window.addEventListener('dragover', (event) => event.preventDefault());
window.addEventListener('drop', (event) => event.preventDefault());

// ---- Result ------------------------------------------------------------------------------

function showResult(taskId, result) {
  state.result = result;
  state.doc = 0;
  const docs = result.documents || [];
  ui.docSelect.replaceChildren(...docs.map((d, i) => new Option(d.name || `#${i + 1}`, i)));
  ui.docSelectLabel.hidden = docs.length < 2;
  forgetResources(); // the previous result's images
  ui.zipLink.href = zipUrl(taskId);
  ui.result.hidden = false;
  showDocument();
}

function showDocument() {
  const taskId = state.taskId;
  const docIndex = state.doc;
  const doc = (state.result.documents || [])[docIndex] || {};
  // MinerU's Markdown refers to "images/<name>"; anything else (remote URLs) is dropped.
  const withKey = Boolean(apiKey());
  renderMarkdown(
    ui.rendered,
    doc.markdown,
    (src) => {
      const m = /^(?:\.\/)?images\/([^/?#]+)$/.exec(src);
      return m ? imageUrl(taskId, docIndex, decodeURIComponent(m[1])) : null;
    },
    withKey,
  );
  if (withKey) authorizeImages(ui.rendered);
  ui.markdownRaw.textContent = doc.markdown || '';
  // Outputs only some servers return are offered only when the document has them.
  for (const option of ui.jsonSelect.options) {
    const absent = option.hasAttribute('data-optional') && doc[option.value] === undefined;
    option.hidden = absent;
    option.disabled = absent;
  }
  if (ui.jsonSelect.selectedOptions[0]?.disabled) ui.jsonSelect.value = 'middle_json';
  showJson();
  showPages();
  const pageCount = Array.isArray(doc.model_json) ? doc.model_json.length : 0;
  chat.setPages(pageCount, (page) => pageUrl(taskId, docIndex, page));
}

function showPages() {
  const taskId = state.taskId;
  const docIndex = state.doc;
  renderPages(ui.pages, ui.legend, {
    doc: (state.result.documents || [])[docIndex] || {},
    source: ui.boxesSelect.value,
    pageUrl: (page) => pageUrl(taskId, docIndex, page),
    onAsk: (page) => chat.selectPage(page),
  });
}

function showJson() {
  const doc = (state.result.documents || [])[state.doc] || {};
  const value = doc[ui.jsonSelect.value];
  ui.jsonRaw.textContent = value === undefined ? '(absent)' : JSON.stringify(value, null, 2);
}

ui.docSelect.addEventListener('change', () => {
  state.doc = Number(ui.docSelect.value);
  showDocument();
});
ui.jsonSelect.addEventListener('change', showJson);
ui.boxesSelect.addEventListener('change', () => {
  if (state.result) showPages();
});

// With an API key the ZIP is fetched with it and saved from a blob: URL (a plain link cannot
// send the key); without one the link downloads it itself.
ui.zipLink.addEventListener('click', async (event) => {
  if (!apiKey()) return;
  event.preventDefault();
  try {
    const response = await apiFetch(ui.zipLink.getAttribute('href'));
    if (!response.ok) throw await errorOf(response);
    const disposition = response.headers.get('Content-Disposition') || '';
    const named = /filename="?([^";]+)"?/.exec(disposition);
    const url = URL.createObjectURL(await response.blob());
    const a = document.createElement('a');
    a.href = url;
    a.download = named ? named[1] : `${state.taskId || 'result'}.zip`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  } catch (err) {
    showError(err.message || String(err));
  }
});

// ---- Tabs (WAI-ARIA tabs pattern: arrow keys move between tabs, Tab enters the panel) --------

function selectTab(tab, focus) {
  for (const t of ui.tabs) {
    const selected = t === tab;
    t.setAttribute('aria-selected', String(selected));
    t.tabIndex = selected ? 0 : -1;
    $(t.getAttribute('aria-controls')).hidden = !selected;
  }
  if (focus) tab.focus();
}

ui.tabs.forEach((tab, i) => {
  tab.addEventListener('click', () => selectTab(tab, false));
  tab.addEventListener('keydown', (event) => {
    const n = ui.tabs.length;
    const next = { ArrowRight: i + 1, ArrowLeft: i - 1 + n, Home: 0, End: n - 1 }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    selectTab(ui.tabs[next % n], true);
  });
});
