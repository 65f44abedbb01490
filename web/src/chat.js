// SPDX-License-Identifier: Apache-2.0
// The chat panel: one question about one image (a page preview of the parsed document, or an
// image the user picks), sent to /v1/chat/completions with stream: true; the answer is appended
// as it arrives. Each question stands alone (MinerU2.5 is not a conversational model).
import { firstModel, streamChat } from './api.js';
import { apiFetch, resourceUrl } from './auth.js';

// Images are sent as data URLs; ones with a longer side than this are scaled down first (the
// model resizes to at most this order of size anyway, and the request stays small).
const MAX_IMAGE_SIDE = 2048;

const $ = (id) => document.getElementById(id);

function readAsDataUrl(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error || new Error('cannot read the image'));
    reader.readAsDataURL(blob);
  });
}

// A data URL for the image blob, scaled down to MAX_IMAGE_SIDE when larger.
async function imageDataUrl(blob) {
  let bitmap;
  try {
    bitmap = await createImageBitmap(blob);
  } catch {
    throw new Error('the file is not an image this browser can decode');
  }
  const scale = Math.min(1, MAX_IMAGE_SIDE / Math.max(bitmap.width, bitmap.height));
  if (scale === 1) {
    bitmap.close();
    return readAsDataUrl(blob);
  }
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, Math.round(bitmap.width * scale));
  canvas.height = Math.max(1, Math.round(bitmap.height * scale));
  canvas.getContext('2d').drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  bitmap.close();
  return canvas.toDataURL('image/jpeg', 0.92);
}

export class ChatPanel {
  constructor() {
    this.form = $('chat-form');
    this.pageSelect = $('chat-page');
    this.imageInput = $('chat-image');
    this.preview = $('chat-preview');
    this.question = $('chat-question');
    this.send = $('chat-send');
    this.stop = $('chat-stop');
    this.log = $('chat-log');
    this.pageUrl = null; // (page index) -> preview URL, once a document is parsed
    this.pickedImage = null; // a File the user picked
    this.previewUrl = null; // object URL shown in the preview
    this.model = null;
    this.controller = null;

    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.ask();
    });
    this.stop.addEventListener('click', () => this.controller && this.controller.abort());
    this.imageInput.addEventListener('change', () => {
      const file = this.imageInput.files[0];
      if (!file) return;
      this.pickedImage = file;
      this.pageSelect.value = '';
      this.showPreview(URL.createObjectURL(file));
    });
    this.pageSelect.addEventListener('change', () => {
      if (this.pageSelect.value === '') return;
      this.pickedImage = null;
      this.imageInput.value = '';
      const page = Number(this.pageSelect.value);
      this.showPreview(this.pageUrl(page), page);
    });
  }

  // Shows url (a blob: URL this panel made, revoked when replaced), or with page set the
  // preview of that page (through auth.js, which owns what it fetches with the key).
  showPreview(url, page = null) {
    if (this.previewUrl && this.previewUrl.startsWith('blob:')) {
      URL.revokeObjectURL(this.previewUrl);
    }
    this.previewUrl = page === null ? url : null;
    this.preview.hidden = false;
    if (page === null) {
      this.preview.src = url;
      return;
    }
    this.preview.removeAttribute('src');
    resourceUrl(url).then(
      (shown) => {
        if (this.pageSelect.value === String(page)) this.preview.src = shown;
      },
      () => {
        this.preview.hidden = true;
      },
    );
  }

  // A parsed document's pages become the choices (page 1 selected).
  setPages(count, pageUrl) {
    this.pageUrl = pageUrl;
    this.pageSelect.replaceChildren();
    const none = new Option('(none: use the image below)', '');
    this.pageSelect.append(none);
    for (let i = 0; i < count; i++) this.pageSelect.append(new Option(`Page ${i + 1}`, String(i)));
    if (count > 0 && !this.pickedImage) {
      this.pageSelect.value = '0';
      this.showPreview(pageUrl(0), 0);
    }
  }

  selectPage(index) {
    this.pageSelect.value = String(index);
    this.pageSelect.dispatchEvent(new Event('change'));
    this.question.focus();
    this.form.scrollIntoView({ behavior: 'smooth', block: 'nearest' });
  }

  async currentImage() {
    if (this.pickedImage) return imageDataUrl(this.pickedImage);
    if (this.pageSelect.value !== '' && this.pageUrl) {
      const response = await apiFetch(this.pageUrl(Number(this.pageSelect.value)));
      if (!response.ok) throw new Error(`cannot load the page preview (${response.status})`);
      return imageDataUrl(await response.blob());
    }
    return null;
  }

  entry(role, text) {
    const div = document.createElement('div');
    div.className = `chat-entry chat-${role}`;
    const who = document.createElement('span');
    who.className = 'chat-who';
    who.textContent = role === 'question' ? 'You' : 'Model';
    const body = document.createElement('p');
    body.className = 'chat-text';
    body.textContent = text;
    div.append(who, body);
    this.log.append(div);
    return body;
  }

  async ask() {
    const question = this.question.value.trim();
    if (!question || this.controller) return;
    const source = this.pickedImage
      ? this.pickedImage.name
      : this.pageSelect.value !== ''
        ? `page ${Number(this.pageSelect.value) + 1}`
        : 'no image';
    this.entry('question', `${question} (${source})`);
    const answer = this.entry('answer', '');
    answer.parentElement.setAttribute('aria-busy', 'true');
    this.controller = new AbortController();
    this.send.disabled = true;
    this.stop.disabled = false;
    try {
      if (!this.model) this.model = await firstModel();
      const image = await this.currentImage();
      await streamChat({
        model: this.model,
        imageDataUrl: image,
        question,
        signal: this.controller.signal,
        onDelta: (text) => {
          answer.textContent += text;
        },
      });
      if (!answer.textContent) answer.textContent = '(empty answer)';
    } catch (err) {
      const aborted = err && err.name === 'AbortError';
      const note = document.createElement('span');
      note.className = aborted ? 'chat-note' : 'chat-error';
      note.textContent = aborted ? ' (stopped)' : `Error: ${err.message || err}`;
      answer.append(note);
    } finally {
      answer.parentElement.removeAttribute('aria-busy');
      this.controller = null;
      this.send.disabled = false;
      this.stop.disabled = true;
    }
  }
}
