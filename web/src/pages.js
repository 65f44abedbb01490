// SPDX-License-Identifier: Apache-2.0
// Page previews with layout boxes drawn over them, colored by block type (layout.js says which
// boxes, from model_json or middle_json). A box's bbox is [x0, y0, x1, y1] in fractions of the
// page, so each box is an absolutely positioned element with percentages of the preview; it needs
// no pixel sizes and stays right at any zoom. Positions and colors are set through element.style
// (the CSSOM), which the Content-Security-Policy allows; every text goes in as textContent or as
// an attribute value.
import { showImage } from './auth.js';
import { boxLabel, boxTitle, colorOf, documentBoxes, legendEntries } from './layout.js';

export { blocksOfPage, colorOf } from './layout.js';

function boxElement(b) {
  const [x0, y0, x1, y1] = b.bbox;
  const el = document.createElement('div');
  el.className = b.style === 'block' ? 'layout-box' : `layout-box ${b.style}`;
  el.style.left = `${x0 * 100}%`;
  el.style.top = `${y0 * 100}%`;
  el.style.width = `${Math.max(0, x1 - x0) * 100}%`;
  el.style.height = `${Math.max(0, y1 - y0) * 100}%`;
  el.style.setProperty('--box-color', colorOf(b.type));
  el.dataset.type = b.type;
  el.title = boxTitle(b);
  const tag = document.createElement('span');
  tag.className = 'layout-tag';
  tag.textContent = boxLabel(b);
  tag.setAttribute('aria-hidden', 'true');
  el.append(tag);
  return el;
}

// Draws every page of one document into container and its legend into legend. source is
// "model_json" (the model's layout, the default) or "middle_json" (MinerU's blocks). pageUrl(i)
// is the preview of page i; onAsk(i) is called by the page's "Ask about this page".
export function renderPages(container, legend, { doc, source = 'model_json', pageUrl, onAsk }) {
  container.replaceChildren();
  legend.replaceChildren();
  const pages = documentBoxes(doc, source);
  pages.forEach((boxes, i) => {
    const figure = document.createElement('figure');
    figure.className = 'page';
    const frame = document.createElement('div');
    frame.className = 'page-frame';
    const img = document.createElement('img');
    img.alt = `Page ${i + 1}`;
    img.loading = 'lazy';
    img.decoding = 'async';
    showImage(img, pageUrl(i)); // with the API key when one is kept
    frame.append(img, ...boxes.map(boxElement));
    const caption = document.createElement('figcaption');
    const label = document.createElement('span');
    label.textContent = `Page ${i + 1} · ${boxes.length} block${boxes.length === 1 ? '' : 's'}`;
    const ask = document.createElement('button');
    ask.type = 'button';
    ask.className = 'link-button';
    ask.textContent = 'Ask about this page';
    ask.addEventListener('click', () => onAsk(i));
    caption.append(label, ask);
    figure.append(frame, caption);
    container.append(figure);
  });
  if (pages.length === 0) {
    const p = document.createElement('p');
    p.textContent = 'No pages.';
    container.append(p);
  }
  for (const entry of legendEntries(pages)) {
    const li = document.createElement('li');
    li.dataset.key = entry.key;
    const swatch = document.createElement('span');
    swatch.className = entry.style === 'block' ? 'swatch' : `swatch ${entry.style}`;
    swatch.style.setProperty('--box-color', entry.color);
    li.append(swatch, `${entry.label} (${entry.count})`);
    legend.append(li);
  }
}
