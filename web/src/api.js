// SPDX-License-Identifier: Apache-2.0
// The HTTP API as the UI uses it (docs/API.md). Every URL is relative to the page, so the UI
// also works behind a reverse proxy that serves it under a path prefix. Every request goes
// through auth.js's apiFetch, which adds the API key when the server wants one.
import { apiFetch } from './auth.js';

// The error message of a failed answer: the API's {"error": {"message"}} shape, MinerU's
// {"error": "..."} and {"detail": "..."}, or the status line.
export async function errorOf(response) {
  let text = '';
  try {
    text = await response.text();
    const body = JSON.parse(text);
    if (body && typeof body.error === 'object' && body.error && body.error.message) {
      return new Error(body.error.message);
    }
    if (body && typeof body.error === 'string') return new Error(body.error);
    if (body && typeof body.detail === 'string') return new Error(body.detail);
  } catch {
    // Not JSON: fall through to the status line (and the text, when short).
  }
  const status = `${response.status} ${response.statusText}`.trim();
  return new Error(text && text.length < 200 ? `${status}: ${text}` : status);
}

async function json(response) {
  if (!response.ok) throw await errorOf(response);
  return response.json();
}

const taskUrl = (id) => `v1/tasks/${encodeURIComponent(id)}`;

// Submits one document; resolves to the task object (202).
export async function submitDocument(file, { formulaEnable = true, tableEnable = true } = {}) {
  const form = new FormData();
  form.append('file', file, file.name);
  form.append('formula_enable', String(formulaEnable));
  form.append('table_enable', String(tableEnable));
  return json(await apiFetch('v1/document/parse', { method: 'POST', body: form }));
}

export async function getTask(id) {
  return json(await apiFetch(taskUrl(id), { cache: 'no-store' }));
}

export async function getResult(id) {
  return json(await apiFetch(`${taskUrl(id)}/result`, { cache: 'no-store' }));
}

export const eventsUrl = (id) => `${taskUrl(id)}/events`;
export const zipUrl = (id) => `${taskUrl(id)}/zip`;
export const pageUrl = (id, doc, page) => `${taskUrl(id)}/pages/${doc}/${page}`;
export const imageUrl = (id, doc, name) =>
  `${taskUrl(id)}/files/${doc}/images/${encodeURIComponent(name)}`;

export const isFinal = (status) => ['completed', 'failed', 'cancelled'].includes(status);

// Follows a task until it ends: Server-Sent Events from /events (read with fetch, which can send
// the API key, unlike EventSource), or polling /tasks/{id} once a second when the event stream
// cannot be opened or breaks. onProgress gets every task object; resolves to the final one.
export function watchTask(id, onProgress, { pollMs = 1000 } = {}) {
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (task) => {
      if (settled) return;
      settled = true;
      onProgress(task);
      resolve(task);
    };
    const poll = async () => {
      while (!settled) {
        try {
          const task = await getTask(id);
          if (isFinal(task.status)) return finish(task);
          onProgress(task);
        } catch (err) {
          settled = true;
          return reject(err);
        }
        await new Promise((r) => setTimeout(r, pollMs));
      }
    };
    const parse = (data) => {
      try {
        return JSON.parse(data);
      } catch {
        return null;
      }
    };
    const stream = async () => {
      const controller = new AbortController();
      try {
        const response = await apiFetch(eventsUrl(id), {
          cache: 'no-store',
          headers: { Accept: 'text/event-stream' },
          signal: controller.signal,
        });
        if (!response.ok || !response.body) throw new Error(`events: ${response.status}`);
        for await (const { event, data } of sseEvents(response.body)) {
          const task = parse(data);
          if (event === 'progress' && task && !settled) onProgress(task);
          if (event === 'done') {
            controller.abort();
            if (task && isFinal(task.status)) return finish(task);
            break;
          }
        }
      } catch {
        // The stream failed: polling is simpler and enough.
      }
      // Ended without "done" (or failed): poll.
      if (!settled) poll();
    };
    if (typeof ReadableStream !== 'function' || typeof TextDecoderStream !== 'function') {
      poll();
      return;
    }
    stream();
  });
}

// The first (and, for this server, only) model object of /v1/models.
export async function modelInfo() {
  const list = await json(await apiFetch('v1/models'));
  if (!list || !Array.isArray(list.data) || list.data.length === 0 || !list.data[0]) {
    throw new Error('the server lists no model');
  }
  return list.data[0];
}

// The id of that model (what chat requests name).
export async function firstModel() {
  return (await modelInfo()).id;
}

// The MinerU generation whose outputs the server writes ("mineru_profile" of the model object):
// MinerU2.5-2509 with MinerU 2.7.6's outputs, or MinerU2.5-Pro with MinerU 3.4.4's.
const PROFILES = {
  2509: { name: 'MinerU2.5-2509', outputs: 'MinerU 2.7.6' },
  pro: { name: 'MinerU2.5-Pro', outputs: 'MinerU 3.4.4' },
};

// What the page header says about the server's model: {text, title, profile} ("tiny-mineru ·
// MinerU2.5-Pro profile"), or null for anything that is not a model object. A profile this UI
// does not know is shown as given; none (older servers) shows the id alone.
export function describeModel(model) {
  if (!model || typeof model !== 'object') return null;
  const id = typeof model.id === 'string' ? model.id.slice(0, 100) : '';
  const raw = typeof model.mineru_profile === 'string' ? model.mineru_profile.slice(0, 40) : '';
  const known = Object.hasOwn(PROFILES, raw) ? PROFILES[raw] : null;
  const profile = known ? `${known.name} profile` : raw ? `profile ${raw}` : '';
  const text = [id, profile].filter(Boolean).join(' · ');
  if (!text) return null;
  const title = known
    ? `Outputs as ${known.outputs} writes them for ${known.name}`
    : raw
      ? `MinerU profile "${raw}"`
      : 'The server does not say which MinerU profile it runs';
  return { text, title, profile: raw };
}

// The events of an event stream: {event, data}, event "" when the stream names none (SSE:
// fields of an event end at a blank line; several data lines are joined with "\n"; comments and
// other fields are skipped).
export async function* sseEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let data = [];
  let event = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let newline;
    while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
      if (line === '') {
        if (data.length > 0) yield { event, data: data.join('\n') };
        data = [];
        event = '';
      } else if (line.startsWith('data:')) {
        data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      } else if (line.startsWith('event:')) {
        event = line.slice(line.startsWith('event: ') ? 7 : 6);
      }
    }
  }
  if (data.length > 0) yield { event, data: data.join('\n') };
}

// The payloads of the "data:" fields of an event stream, one per event.
export async function* sseData(body) {
  for await (const { data } of sseEvents(body)) yield data;
}

// POST /v1/chat/completions with stream: true; calls onDelta with each piece of the answer as
// it arrives and resolves when the stream says [DONE] (or ends).
// Longest chat answer asked for, in tokens: enough for a page's worth of text, and a bound on
// how long a rambling answer can hold the model.
export const CHAT_MAX_TOKENS = 1024;

export async function streamChat({ model, imageDataUrl, question, signal, onDelta }) {
  const content = [];
  if (imageDataUrl) content.push({ type: 'image_url', image_url: { url: imageDataUrl } });
  content.push({ type: 'text', text: question });
  const response = await apiFetch('v1/chat/completions', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      model,
      stream: true,
      max_tokens: CHAT_MAX_TOKENS,
      messages: [{ role: 'user', content }],
    }),
    signal,
  });
  if (!response.ok) throw await errorOf(response);
  for await (const data of sseData(response.body)) {
    if (data.trim() === '[DONE]') return;
    let chunk;
    try {
      chunk = JSON.parse(data);
    } catch {
      continue;
    }
    if (chunk.error) throw new Error(chunk.error.message || String(chunk.error));
    const delta = chunk.choices && chunk.choices[0] && chunk.choices[0].delta;
    if (delta && delta.content) onDelta(delta.content);
  }
}
