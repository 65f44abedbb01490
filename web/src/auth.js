// SPDX-License-Identifier: Apache-2.0
// The server's API key (docs/API.md, "Access"): asked for when the server answers 401, kept for
// this browser tab only (sessionStorage: gone when the tab closes, never shared with other
// sites), and sent as "Authorization: Bearer <key>" on every request. The key never goes into a
// URL (where it would land in logs, history and Referer headers): event streams are read with
// fetch instead of EventSource (which cannot send headers), and images and downloads that need
// the key are fetched and shown from blob: URLs.

const STORAGE_KEY = 'mineru-cpp.api-key';

export function apiKey() {
  try {
    return sessionStorage.getItem(STORAGE_KEY) || '';
  } catch {
    return ''; // storage disabled: no key kept
  }
}

export function setApiKey(key) {
  try {
    if (key) sessionStorage.setItem(STORAGE_KEY, key);
    else sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // Storage disabled: the key lasts as long as this page's memory of it (none).
  }
}

// The key dialog of index.html: resolves to the key entered, or '' when cancelled.
function showKeyDialog(message) {
  const dialog = document.getElementById('key-dialog');
  if (!dialog || typeof dialog.showModal !== 'function') {
    return Promise.resolve((window.prompt(message) || '').trim());
  }
  const form = document.getElementById('key-form');
  const input = document.getElementById('key-input');
  const cancel = document.getElementById('key-cancel');
  document.getElementById('key-message').textContent = message;
  input.value = '';
  return new Promise((resolve) => {
    const done = (value) => {
      form.removeEventListener('submit', onSubmit);
      cancel.removeEventListener('click', onCancel);
      dialog.removeEventListener('cancel', onCancel);
      if (dialog.open) dialog.close();
      resolve(value);
    };
    const onSubmit = (event) => {
      event.preventDefault(); // never a form submission (the policy allows none)
      done(input.value.trim());
    };
    const onCancel = (event) => {
      event.preventDefault();
      done('');
    };
    form.addEventListener('submit', onSubmit);
    cancel.addEventListener('click', onCancel);
    dialog.addEventListener('cancel', onCancel);
    dialog.showModal();
    input.focus();
  });
}

let asking = null; // one dialog at a time: requests refused together share it

// Asks for the key (again, when one was refused); resolves to the new key, '' when cancelled.
export function askForKey(refused) {
  if (!asking) {
    const message = refused
      ? 'The server did not accept this API key. Enter the key:'
      : 'This server needs an API key. Enter the key:';
    asking = showKeyDialog(message).then((key) => {
      asking = null;
      if (key) setApiKey(key);
      return key;
    });
  }
  return asking;
}

const MAX_ATTEMPTS = 3;

// fetch() with the key; on 401 asks for the key and tries again (at most MAX_ATTEMPTS times;
// bodies here are strings or FormData, which can be sent again). Resolves to the last response.
// The key goes only to this page's own origin.
export async function apiFetch(url, init = {}) {
  const sameOrigin = new URL(url, window.location.href).origin === window.location.origin;
  for (let attempt = 1; ; attempt++) {
    const key = sameOrigin ? apiKey() : '';
    const headers = new Headers(init.headers || {});
    if (key) headers.set('Authorization', `Bearer ${key}`);
    const response = await fetch(url, { ...init, headers });
    if (!sameOrigin || response.status !== 401 || attempt >= MAX_ATTEMPTS) return response;
    if (!(await askForKey(Boolean(key)))) return response;
  }
}

// Object URLs of resources fetched with the key, by URL; revoked together by forgetResources.
const objectUrls = new Map();

// A URL an <img> (or a download link) can use for url: url itself when no key is kept (the
// browser loads it lazily on its own), else a blob: URL of what apiFetch got.
export async function resourceUrl(url) {
  if (!apiKey()) return url;
  if (!objectUrls.has(url)) {
    const pending = apiFetch(url, { cache: 'no-store' }).then(async (response) => {
      if (!response.ok) throw new Error(`${response.status} ${response.statusText}`.trim());
      return URL.createObjectURL(await response.blob());
    });
    objectUrls.set(url, pending);
    pending.catch(() => objectUrls.delete(url));
  }
  return objectUrls.get(url);
}

// Drops the blob: URLs of the resources of a result no longer shown.
export function forgetResources() {
  for (const pending of objectUrls.values()) {
    pending.then((u) => URL.revokeObjectURL(u)).catch(() => {});
  }
  objectUrls.clear();
}

let observer = null;

// Shows url in img. Without a key: img.src = url. With one: fetched when the image comes near
// the viewport (so lazy page previews stay lazy), then shown from its blob: URL.
export function showImage(img, url) {
  if (!apiKey()) {
    img.src = url;
    return;
  }
  img.dataset.apiSrc = url;
  if (typeof IntersectionObserver !== 'function') {
    loadObserved(img);
    return;
  }
  if (!observer) {
    observer = new IntersectionObserver(
      (entries) => {
        for (const entry of entries) {
          if (!entry.isIntersecting) continue;
          observer.unobserve(entry.target);
          loadObserved(entry.target);
        }
      },
      { rootMargin: '200px' },
    );
  }
  observer.observe(img);
}

function loadObserved(img) {
  const url = img.dataset.apiSrc;
  if (!url) return;
  resourceUrl(url).then(
    (u) => {
      if (img.dataset.apiSrc === url) img.src = u;
    },
    () => {
      img.alt = `${img.alt} (not loaded)`;
    },
  );
}

// Under root, the images the Markdown renderer left with data-api-src (an API URL of this
// server: documents cannot set that attribute, the sanitizer drops it) are shown through
// showImage, so that a kept key reaches them.
export function authorizeImages(root) {
  for (const img of root.querySelectorAll('img[data-api-src]')) {
    const url = img.getAttribute('data-api-src');
    if (url.startsWith('v1/')) showImage(img, url);
  }
}
