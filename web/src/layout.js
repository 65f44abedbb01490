// SPDX-License-Identifier: Apache-2.0
// The layout boxes of the page previews, as plain data (no DOM, so node's test runner can check
// them): which boxes a page has, where (fractions of the page), in which color and style, and
// the legend of a document. pages.js draws them.
//
// Two sources, both parts of every result:
// - model_json: the client's blocks as the model found them (MinerU's `_model.json`): per page a
//   list of {type, bbox: [x0, y0, x1, y1] in fractions of the page, angle, content}, plus, from
//   MinerU2.5-Pro, `merge_prev` (text continuing the previous block) and `sub_type` (the image
//   analysis class of an image or chart).
// - middle_json: MinerU's blocks (`_middle.json`, `pdf_info[page]`): `para_blocks` in reading
//   order and `discarded_blocks` (headers, footers, ...), bboxes in PDF points of `page_size`.
//   Visual groups (image, table, chart, code) hold their body, captions and footnotes in
//   `blocks`; a list holds its items. MinerU 3.4.4 adds `chart` groups, `sub_images` on an image
//   group made from an image_block (bboxes relative to the group, 0-1), and `lines_deleted` on
//   blocks whose content was merged into an earlier block (a paragraph continued across a column
//   break, a table continued from the previous page).
//
// Drawing styles: "block" (a solid outline, lightly filled), "merged" (a dashed outline, no fill:
// the region was detected, but its text is shown by the block it was merged into, so it is
// neither hidden, which would look like unparsed text, nor drawn as a paragraph of its own) and
// "sub-image" (a dotted outline: one panel of a figure that MinerU crops and shows as a whole).

// Colors by type, grouped by hue: text blue, titles red, figures green (charts lime), tables
// orange, formulas violet, code slate, lists cyan, page furniture grey. Both generations of
// types: the 31 of the MinerU2.5-Pro client (mineru-vl-utils 1.2.1; the 22 of 2509 among them),
// and MinerU's block types of middle.json (MinerU 2.7.6 and 3.4.4).
export const TYPE_COLORS = Object.freeze({
  // Types of MinerU2.5-2509 and MinerU 2.7.6.
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
  // New with MinerU2.5-Pro (client) and MinerU 3.4.4 (middle.json).
  doc_title: '#991b1b',
  paragraph_title: '#f43f5e',
  list_item: '#06b6d4',
  index: '#4f46e5',
  caption: '#0d9488',
  footnote: '#57534e',
  formula_number: '#a855f7',
  inline_formula: '#8b5cf6',
  image_block: '#047857',
  image_block_body: '#047857',
  chart_body: '#65a30d',
  chart_caption: '#3f6212',
  chart_footnote: '#84cc16',
  code_body: '#475569',
  code_footnote: '#1e293b',
  unknown: '#6b7280',
});

// A stable color for any type: its own, or a hue hashed from the name. Only own keys count, so
// hostile names ("__proto__", "constructor") get a hashed color too; a non-string that is an
// object (from hostile JSON) is named "unknown" rather than converted, which could throw.
export function colorOf(type) {
  const name = typeof type === 'object' && type !== null ? 'unknown' : String(type);
  if (Object.hasOwn(TYPE_COLORS, name)) return TYPE_COLORS[name];
  let h = 0;
  for (const c of name) h = (h * 31 + c.codePointAt(0)) % 360;
  return `hsl(${h} 65% 42%)`;
}

// What the legend says about the two special styles.
export const STYLE_NOTES = Object.freeze({
  merged: 'merged into an earlier block',
  'sub-image': 'sub-image of an image block',
});

// Longest text kept for a box's tooltip.
const TOOLTIP_CHARS = 200;

const clamp01 = (v) => Math.min(1, Math.max(0, Number(v) || 0));
const typeName = (t) => (typeof t === 'string' && t !== '' ? t : 'unknown');
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const arrayOf = (v) => (Array.isArray(v) ? v : []);
const stringOf = (v) => (typeof v === 'string' ? v : '');

function fractionBox(bbox) {
  if (!Array.isArray(bbox) || bbox.length !== 4) return null;
  return bbox.map(clamp01);
}

// bbox in PDF points -> fractions of a page of width w and height h (both > 0).
function pointsBox(bbox, w, h) {
  if (!Array.isArray(bbox) || bbox.length !== 4) return null;
  const [x0, y0, x1, y1] = bbox.map((v) => Number(v));
  if (![x0, y0, x1, y1].every(Number.isFinite)) return null;
  return [clamp01(x0 / w), clamp01(y0 / h), clamp01(x1 / w), clamp01(y1 / h)];
}

// The blocks of one page of model_json, whatever its exact nesting: a list of blocks, or an
// object holding them under "blocks" / "layout_dets".
export function blocksOfPage(page) {
  if (Array.isArray(page)) return page;
  if (page && Array.isArray(page.blocks)) return page.blocks;
  if (page && Array.isArray(page.layout_dets)) return page.layout_dets;
  return [];
}

// One box: {type, bbox (fractions), style, subType, text, note}.
function box(type, bbox, { style = 'block', subType = '', text = '', note = '' } = {}) {
  return {
    type: typeName(type),
    bbox,
    style,
    subType: stringOf(subType),
    text: text.slice(0, TOOLTIP_CHARS),
    note,
  };
}

// The boxes of one page of model_json, in its order.
export function modelBoxes(page) {
  const boxes = [];
  for (const block of blocksOfPage(page)) {
    if (!isObject(block)) continue;
    const bbox = fractionBox(block.bbox);
    if (!bbox) continue;
    boxes.push(box(block.type, bbox, {
      subType: block.sub_type,
      text: stringOf(block.content),
      note: block.merge_prev === true ? 'continues the previous block' : '',
    }));
  }
  return boxes;
}

// The pages of middle_json: MinerU's "pdf_info" (also the "pages" of MinerU 4's draft envelope).
export function middlePages(middleJson) {
  if (!isObject(middleJson)) return [];
  if (Array.isArray(middleJson.pdf_info)) return middleJson.pdf_info;
  if (Array.isArray(middleJson.pages)) return middleJson.pages;
  return [];
}

// The visible text of a middle.json block, for its tooltip: its spans' text and formulas, and the
// image analysis text of image and chart spans; never a table's HTML. Stops once long enough.
export function blockText(block) {
  let text = '';
  for (const line of arrayOf(block.lines)) {
    for (const span of arrayOf(isObject(line) ? line.spans : null)) {
      if (!isObject(span) || typeof span.content !== 'string' || span.content === '') continue;
      const piece = span.type === 'inline_equation' ? `$${span.content}$` : span.content;
      text = text ? `${text} ${piece}` : piece;
      if (text.length >= TOOLTIP_CHARS) return text.slice(0, TOOLTIP_CHARS);
    }
  }
  return text;
}

// Groups whose bbox is their body's: drawn as their sub-blocks only (body, captions, footnotes).
const VISUAL_GROUPS = new Set(['image', 'table', 'chart', 'code']);

function middleBlockBox(block, w, h, subType) {
  const bbox = pointsBox(block.bbox, w, h);
  if (!bbox) return null;
  const merged = block.lines_deleted === true;
  return box(block.type, bbox, {
    style: merged ? 'merged' : 'block',
    subType,
    text: blockText(block),
    note: merged ? STYLE_NOTES.merged : '',
  });
}

// The boxes of one page of middle_json: para_blocks then discarded_blocks. A visual group is
// drawn as its sub-blocks (a chart as chart_body, chart_caption, ...) and its sub-images; any
// other block with sub-blocks (a list) as itself and its items. Two levels, as MinerU nests them.
export function middleBoxes(page) {
  if (!isObject(page) || !Array.isArray(page.page_size)) return [];
  const [w, h] = page.page_size.map((v) => Number(v));
  if (!(w > 0 && h > 0 && Number.isFinite(w) && Number.isFinite(h))) return [];
  const boxes = [];
  const add = (b) => b && boxes.push(b);
  for (const block of [...arrayOf(page.para_blocks), ...arrayOf(page.discarded_blocks)]) {
    if (!isObject(block)) continue;
    const children = arrayOf(block.blocks).filter(isObject);
    const isVisualGroup = VISUAL_GROUPS.has(block.type) && children.length > 0;
    if (!isVisualGroup) add(middleBlockBox(block, w, h, block.sub_type));
    for (const child of children) {
      const isBody = isVisualGroup && /_body$/.test(stringOf(child.type));
      add(middleBlockBox(child, w, h, isBody ? block.sub_type : ''));
    }
    const frame = pointsBox(block.bbox, w, h);
    if (!frame || block.type !== 'image') continue;
    const [fx0, fy0, fx1, fy1] = frame;
    for (const sub of arrayOf(block.sub_images)) {
      if (!isObject(sub) || !Array.isArray(sub.bbox) || sub.bbox.length !== 4) continue;
      const [x0, y0, x1, y1] = sub.bbox.map(clamp01);
      const at = (f0, f1, t) => f0 + (f1 - f0) * t;
      add(box(sub.type === 'chart' ? 'chart' : 'image',
        [at(fx0, fx1, x0), at(fy0, fy1, y0), at(fx0, fx1, x1), at(fy0, fy1, y1)],
        { style: 'sub-image', note: STYLE_NOTES['sub-image'] }));
    }
  }
  return boxes;
}

// The boxes of every page of a document from the chosen source ("model_json" or
// "middle_json"): one array of boxes per page, in page order.
export function documentBoxes(doc, source) {
  if (!isObject(doc)) return [];
  if (source === 'middle_json') return middlePages(doc.middle_json).map(middleBoxes);
  return arrayOf(doc.model_json).map(modelBoxes);
}

// The legend of a document: one entry per type drawn as a block, most frequent first (ties in
// the order first drawn), and one per special style drawn: {key, label, color, style, count}.
export function legendEntries(pages) {
  const types = new Map();
  const styles = new Map();
  for (const boxes of pages) {
    for (const b of boxes) {
      if (b.style === 'block') types.set(b.type, (types.get(b.type) || 0) + 1);
      else styles.set(b.style, (styles.get(b.style) || 0) + 1);
    }
  }
  const entries = [...types]
    .sort((a, b) => b[1] - a[1])
    .map(([type, count]) => ({
      key: type, label: type, color: colorOf(type), style: 'block', count,
    }));
  for (const style of ['merged', 'sub-image']) {
    const count = styles.get(style);
    if (count) {
      entries.push({ key: style, label: STYLE_NOTES[style], color: '#59636e', style, count });
    }
  }
  return entries;
}

// The short label a box carries ("chart_body", "text · merged", "image · sub-image").
export function boxLabel(b) {
  return b.style === 'block' ? b.type : `${b.type} · ${b.style}`;
}

// The tooltip of a box: label, sub-type, note and text.
export function boxTitle(b) {
  let title = boxLabel(b);
  if (b.subType) title += ` (${b.subType})`;
  if (b.note) title += ` — ${b.note}`;
  if (b.text) title += `: ${b.text}`;
  return title;
}
