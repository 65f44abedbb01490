// SPDX-License-Identifier: Apache-2.0
// Page previews with the layout boxes of model_json drawn over them, colored by block type.
// A block's bbox is [x0, y0, x1, y1] in fractions of the page (docs/API.md), so each box is an
// absolutely positioned element with percentages of the preview; it needs no pixel sizes and
// stays right at any zoom. Positions and colors are set through element.style (the CSSOM), which
// the Content-Security-Policy allows.

// MinerU2.5's block types, grouped by hue: text blue, titles red, figures green, tables orange,
// formulas violet, code grey, page furniture light grey.
const TYPE_COLORS = {
  text: '#2563eb',
  list: '#0891b2',
  ref_text: '#0e7490',
  title: '#dc2626',
  image: '#16a34a',
  image_body: '#16a34a',
  image_caption: '#15803d',
  image_footnote: '#4d7c0f',
  chart: '#65a30d',
  table: '#ea580c',
  table_body: '#ea580c',
  table_caption: '#c2410c',
  table_footnote: '#b45309',
  equation: '#7c3aed',
  interline_equation: '#7c3aed',
  equation_block: '#6d28d9',
  code: '#475569',
  code_caption: '#334155',
  algorithm: '#64748b',
  header: '#9ca3af',
  footer: '#9ca3af',
  page_number: '#a8a29e',
  page_footnote: '#db2777',
  aside_text: '#c026d3',
  phonetic: '#a16207',
};

// A stable color for a type not listed above.
export function colorOf(type) {
  if (TYPE_COLORS[type]) return TYPE_COLORS[type];
  let h = 0;
  for (const c of String(type)) h = (h * 31 + c.codePointAt(0)) % 360;
  return `hsl(${h} 65% 42%)`;
}

const clamp01 = (v) => Math.min(1, Math.max(0, Number(v) || 0));

// The blocks of one page of model_json, whatever its exact nesting: a list of blocks, or an
// object holding them under "blocks" / "layout_dets".
export function blocksOfPage(page) {
  if (Array.isArray(page)) return page;
  if (page && Array.isArray(page.blocks)) return page.blocks;
  if (page && Array.isArray(page.layout_dets)) return page.layout_dets;
  return [];
}

function boxElement(block) {
  const [x0, y0, x1, y1] = (block.bbox || []).map(clamp01);
  const box = document.createElement('div');
  box.className = 'layout-box';
  box.style.left = `${x0 * 100}%`;
  box.style.top = `${y0 * 100}%`;
  box.style.width = `${Math.max(0, x1 - x0) * 100}%`;
  box.style.height = `${Math.max(0, y1 - y0) * 100}%`;
  box.style.setProperty('--box-color', colorOf(block.type));
  box.dataset.type = block.type || 'unknown';
  const text = typeof block.content === 'string' ? block.content.slice(0, 200) : '';
  box.title = text ? `${block.type}: ${text}` : String(block.type);
  const tag = document.createElement('span');
  tag.className = 'layout-tag';
  tag.textContent = block.type;
  tag.setAttribute('aria-hidden', 'true');
  box.append(tag);
  return box;
}

// Draws every page of one document into container and the types seen into legend.
// pageUrl(i) is the preview of page i; onAsk(i) is called by the page's "Ask about this page".
export function renderPages(container, legend, { modelJson, pageUrl, onAsk }) {
  container.replaceChildren();
  legend.replaceChildren();
  const pages = Array.isArray(modelJson) ? modelJson : [];
  const types = new Map();
  pages.forEach((page, i) => {
    const blocks = blocksOfPage(page);
    const figure = document.createElement('figure');
    figure.className = 'page';
    const frame = document.createElement('div');
    frame.className = 'page-frame';
    const img = document.createElement('img');
    img.src = pageUrl(i);
    img.alt = `Page ${i + 1}`;
    img.loading = 'lazy';
    img.decoding = 'async';
    frame.append(img);
    for (const block of blocks) {
      if (!Array.isArray(block.bbox) || block.bbox.length !== 4) continue;
      frame.append(boxElement(block));
      types.set(block.type, (types.get(block.type) || 0) + 1);
    }
    const caption = document.createElement('figcaption');
    const label = document.createElement('span');
    label.textContent = `Page ${i + 1} · ${blocks.length} block${blocks.length === 1 ? '' : 's'}`;
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
  for (const [type, count] of [...types].sort((a, b) => b[1] - a[1])) {
    const li = document.createElement('li');
    const swatch = document.createElement('span');
    swatch.className = 'swatch';
    swatch.style.setProperty('--box-color', colorOf(type));
    li.append(swatch, `${type} (${count})`);
    legend.append(li);
  }
}
