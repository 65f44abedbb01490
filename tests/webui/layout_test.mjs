// SPDX-License-Identifier: Apache-2.0
// The web UI's DOM-free modules under node's test runner (no browser, no server):
//   node --test tests/webui/layout_test.mjs
// layout.js (which boxes a page preview draws, their colors, styles and legend), inline_math.js
// (formulas inside a line) and api.js's describeModel (the header's profile). The MinerU 3.4.4
// (MinerU2.5-Pro) shapes come from fixtures/pro_result.json, a hand-made task result: page 0 is
// the document of the TV-32/TV-34 vectors (a paragraph continued by merge_prev and merged away,
// an analysed photo, a bar chart, a table continued on page 1), page 1 adds an image block with
// two sub-images, a flowchart with Mermaid, a reference list, an algorithm and an image whose
// analysis text is hostile HTML.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { describeModel } from '../../web/src/api.js';
import { matchMathAt, splitInlineMath } from '../../web/src/inline_math.js';
import {
  TYPE_COLORS,
  blockText,
  boxLabel,
  boxTitle,
  colorOf,
  documentBoxes,
  legendEntries,
  middleBoxes,
  middlePages,
  modelBoxes,
} from '../../web/src/layout.js';

const fixture = JSON.parse(
  readFileSync(new URL('./fixtures/pro_result.json', import.meta.url), 'utf8'),
);
const proDoc = fixture.documents[0];

// bboxes are divisions of PDF points: compare them with a tolerance.
function assertBox(actual, expected) {
  assert.equal(actual.length, 4, `bbox ${actual}`);
  actual.forEach((v, i) => assert.ok(Math.abs(v - expected[i]) < 1e-9, `${actual} vs ${expected}`));
}

// ---- Colors and legend --------------------------------------------------------------------

test('the colors of the 2509 generation stay as they were', () => {
  const before = {
    text: '#2563eb', list: '#0891b2', ref_text: '#0e7490', title: '#dc2626', image: '#16a34a',
    image_body: '#16a34a', image_caption: '#15803d', image_footnote: '#4d7c0f', chart: '#65a30d',
    table: '#ea580c', table_body: '#ea580c', table_caption: '#c2410c',
    table_footnote: '#b45309', equation: '#7c3aed', interline_equation: '#7c3aed',
    equation_block: '#6d28d9', code: '#475569', code_caption: '#334155', algorithm: '#64748b',
    header: '#9ca3af', footer: '#9ca3af', page_number: '#a8a29e', page_footnote: '#db2777',
    aside_text: '#c026d3', phonetic: '#a16207',
  };
  for (const [type, color] of Object.entries(before)) assert.equal(colorOf(type), color, type);
});

test('every block type of both generations has its own listed color', () => {
  // mineru-vl-utils 1.2.1 BLOCK_TYPES (31; the first 22 are 2509's) and the layout-only label.
  const client = [
    'text', 'title', 'table', 'image', 'code', 'algorithm', 'header', 'footer', 'page_number',
    'page_footnote', 'aside_text', 'equation', 'equation_block', 'ref_text', 'list', 'phonetic',
    'table_caption', 'table_footnote', 'image_caption', 'image_footnote', 'code_caption',
    'unknown', 'doc_title', 'paragraph_title', 'formula_number', 'index', 'list_item', 'caption',
    'footnote', 'chart', 'image_block', 'inline_formula',
  ];
  // MinerU's middle.json types (2.7.6 and 3.4.4).
  const mineru = [
    'interline_equation', 'image_body', 'table_body', 'code_body', 'chart_body', 'chart_caption',
    'chart_footnote', 'code_footnote', 'image_block_body',
  ];
  assert.equal(new Set(client).size, 32);
  for (const type of [...client, ...mineru]) {
    assert.ok(Object.hasOwn(TYPE_COLORS, type), `${type} has no color`);
    assert.match(colorOf(type), /^#[0-9a-f]{6}$/, type);
  }
  // The new types got colors of their own: no new type shares one with an old type, except a
  // group's body, which is the group's color as image_body is image's.
  const sameAsGroup = { chart_body: 'chart', code_body: 'code', image_block_body: 'image_block' };
  const old = new Set(['#2563eb', '#0891b2', '#0e7490', '#dc2626', '#16a34a', '#15803d',
    '#4d7c0f', '#65a30d', '#ea580c', '#c2410c', '#b45309', '#7c3aed', '#6d28d9', '#475569',
    '#334155', '#64748b', '#9ca3af', '#a8a29e', '#db2777', '#c026d3', '#a16207']);
  for (const type of ['doc_title', 'paragraph_title', 'list_item', 'index', 'caption', 'footnote',
    'formula_number', 'inline_formula', 'image_block', 'chart_caption', 'chart_footnote',
    'code_footnote', 'unknown']) {
    assert.ok(!old.has(colorOf(type)), `${type} reuses an old color`);
  }
  for (const [body, group] of Object.entries(sameAsGroup)) {
    assert.equal(colorOf(body), colorOf(group));
  }
});

test('unknown and hostile type names get a hashed color, never a prototype member', () => {
  for (const type of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'x'.repeat(1e4),
    'new_type']) {
    assert.match(colorOf(type), /^hsl\(\d+ 65% 42%\)$/, type.slice(0, 20));
  }
  assert.equal(colorOf('new_type'), colorOf('new_type'));
  assert.match(colorOf(undefined), /^hsl\(/);
  assert.equal(colorOf({ toString: null, valueOf: null }), colorOf('unknown'));
});

// ---- model_json (the default source, as before) -------------------------------------------

test('a 2509 page of model_json draws every block with a bbox, in order', () => {
  const page = [
    { type: 'title', bbox: [0.08, 0.04, 0.92, 0.09], angle: 0, content: 'A title' },
    { type: 'text', bbox: [0.08, 0.11, 0.92, 0.25], angle: 0, content: 'Some text' },
    { type: 'table', bbox: [0.08, 0.27, 0.92, 0.42], angle: 0, content: '<table></table>' },
    { type: 'equation', bbox: [0.2, 0.44, 0.8, 0.5], angle: 0, content: '\\[x\\]' },
    { type: 'image', bbox: [0.08, 0.52, 0.6, 0.8], angle: 0, content: null },
    { type: 'text', bbox: [0.1, 0.2, 0.3], content: 'no box: three numbers' },
    { type: 'text', content: 'no box at all' },
  ];
  const boxes = modelBoxes(page);
  assert.deepEqual(boxes.map((b) => b.type), ['title', 'text', 'table', 'equation', 'image']);
  assert.ok(boxes.every((b) => b.style === 'block' && b.note === '' && b.subType === ''));
  assert.deepEqual(boxes[0].bbox, [0.08, 0.04, 0.92, 0.09]);
  assert.equal(boxTitle(boxes[0]), 'title: A title');
  assert.equal(boxTitle(boxes[4]), 'image');
  assert.equal(boxLabel(boxes[1]), 'text');
  // Other nestings of a page, as before.
  assert.equal(modelBoxes({ blocks: page }).length, 5);
  assert.equal(modelBoxes({ layout_dets: page }).length, 5);
  // Out-of-page coordinates are clamped to the page.
  assert.deepEqual(modelBoxes([{ type: 'text', bbox: [-1, 0.5, 2, 'x'] }])[0].bbox, [0, 0.5, 1, 0]);
});

test('a Pro page of model_json carries sub_type, merge_prev and the analysis text', () => {
  const [page0, page1] = documentBoxes(proDoc, 'model_json');
  assert.equal(page0.length, 8);
  assert.equal(page1.length, 13);
  const continued = page0[3];
  assert.equal(continued.note, 'continues the previous block');
  assert.equal(boxTitle(continued), 'text — continues the previous block: robust to noise.');
  const photo = page0[4];
  assert.equal(boxTitle(photo), 'image (natural_image): A red car on a road.');
  assert.equal(page0[6].type, 'chart');
  assert.equal(page0[6].subType, 'bar_chart');
  // The image block and the two panels inside it are the model's own blocks.
  assert.deepEqual(page1.slice(2, 5).map((b) => b.type), ['image_block', 'image', 'chart']);
  assert.ok(page1.every((b) => b.style === 'block'));
  assert.equal(page1[10].type, 'algorithm');
});

// ---- middle_json (MinerU's blocks) ----------------------------------------------------------

test('middle_json page 0: groups as their sub-blocks, the merged paragraph dashed', () => {
  const boxes = middleBoxes(middlePages(proDoc.middle_json)[0]);
  assert.deepEqual(boxes.map(boxLabel), ['title', 'text', 'text · merged', 'image_body',
    'image_caption', 'chart_body', 'table_body', 'header']);
  assertBox(boxes[0].bbox, [0.1, 0.06, 0.9, 0.09]);
  // The paragraph that absorbed the continuation shows the text of both lines.
  assert.equal(boxes[1].text, 'We study $x_1$ and the *method* is robust to noise.');
  const merged = boxes[2];
  assert.equal(merged.style, 'merged');
  assertBox(merged.bbox, [0.52, 0.1, 0.9, 0.3]);
  assert.equal(boxTitle(merged), 'text · merged — merged into an earlier block');
  const photo = boxes[3];
  assert.equal(photo.subType, 'natural_image');
  assert.equal(boxTitle(photo), 'image_body (natural_image): A red car on a road.');
  assert.equal(boxes[4].subType, '');
  const chart = boxes[5];
  assert.equal(chart.subType, 'bar_chart');
  assert.equal(chart.text, '| Year | Sales |\n| --- | --- |\n| 2020 | 10 |');
  assertBox(chart.bbox, [0.1, 0.62, 0.9, 0.8]);
  assert.equal(boxes[6].text, '', 'a table body shows no HTML');
  assertBox(boxes[7].bbox, [0.1, 0.02, 0.9, 0.04]);
});

test('middle_json page 1: merged table, sub-images, list with items, algorithm, discarded', () => {
  const boxes = middleBoxes(middlePages(proDoc.middle_json)[1]);
  assert.deepEqual(boxes.map(boxLabel), ['table_body · merged', 'interline_equation',
    'image_body', 'image_caption', 'image · sub-image', 'chart · sub-image', 'image_body', 'list',
    'ref_text', 'ref_text', 'code_body', 'image_body', 'page_number']);
  // Sub-images: relative to the image group's bbox [60, 224, 540, 400] of a 600 x 800 page.
  assertBox(boxes[4].bbox, [0.1, 0.28, 0.5, 0.5]);
  assertBox(boxes[5].bbox, [0.5, 0.28, 0.9, 0.5]);
  assert.equal(boxes[4].note, 'sub-image of an image block');
  assert.equal(boxes[6].subType, 'flowchart');
  assert.match(boxes[6].text, /^```mermaid\ngraph TD\n/);
  assert.equal(boxes[10].subType, 'algorithm');
  assert.equal(boxes[10].text, 'for i in 1..n: $a_i < b$');
  // Hostile analysis text is only ever data here (pages.js puts it into a title attribute).
  assert.match(boxes[11].text, /^<img src=x onerror=/);
  assert.equal(boxes[11].text.length, 200, 'tooltips are cut at 200 characters');
});

test('the legend counts types drawn as blocks and lists the special styles last', () => {
  const entries = legendEntries(documentBoxes(proDoc, 'middle_json'));
  assert.deepEqual(entries.map((e) => `${e.label} (${e.count})`), [
    'image_body (4)', 'image_caption (2)', 'ref_text (2)', 'title (1)', 'text (1)',
    'chart_body (1)', 'table_body (1)', 'header (1)', 'interline_equation (1)', 'list (1)',
    'code_body (1)', 'page_number (1)', 'merged into an earlier block (2)',
    'sub-image of an image block (2)',
  ]);
  assert.deepEqual(entries.slice(-2).map((e) => e.style), ['merged', 'sub-image']);
  assert.equal(entries[0].color, colorOf('image_body'));
  const model = legendEntries(documentBoxes(proDoc, 'model_json'));
  assert.ok(model.every((e) => e.style === 'block'));
  assert.ok(model.some((e) => e.key === 'image_block' && e.color === '#047857'));
  assert.deepEqual(legendEntries([]), []);
});

test('a 2509 middle.json (MinerU 2.7.6) draws the same way, without the new fields', () => {
  const page = {
    para_blocks: [
      { type: 'image', bbox: [0, 0, 50, 50], index: 0, blocks: [
        { type: 'image_body', bbox: [0, 0, 50, 50], lines: [{ spans: [{ type: 'image',
          image_path: 'a.jpg' }] }] },
        { type: 'image_footnote', bbox: [0, 50, 50, 60], lines: [{ spans: [{ type: 'text',
          content: 'Note' }] }] }] },
      { type: 'code', bbox: [0, 60, 100, 90], index: 1, sub_type: 'code', guess_lang: 'python',
        blocks: [{ type: 'code_body', bbox: [0, 60, 100, 90], lines: [] }] },
    ],
    discarded_blocks: [{ type: 'footer', bbox: [0, 190, 100, 200], lines: [] }],
    page_size: [100, 200],
    page_idx: 0,
  };
  const boxes = middleBoxes(page);
  assert.deepEqual(boxes.map(boxLabel), ['image_body', 'image_footnote', 'code_body', 'footer']);
  assert.equal(boxes[2].subType, 'code');
  assertBox(boxes[3].bbox, [0, 0.95, 1, 1]);
  assert.equal(boxes[1].text, 'Note');
});

test('hostile or malformed middle_json never throws and draws only what it can place', () => {
  for (const value of [null, undefined, 3, 'x', [], { pdf_info: 'x' }, { pdf_info: {} }]) {
    assert.deepEqual(middlePages(value), []);
  }
  assert.equal(middlePages({ pages: [{}] }).length, 1, "MinerU 4's draft envelope");
  const block = { type: 'text', bbox: [10, 10, 20, 20], lines: [] };
  for (const size of [undefined, [], [0, 100], [100, -1], ['a', 'b'], [Infinity, 1], 'x']) {
    assert.deepEqual(middleBoxes({ page_size: size, para_blocks: [block] }), [], String(size));
  }
  for (const page of [null, 3, 'x', [], { page_size: [100, 100], para_blocks: 'x' }]) {
    assert.deepEqual(middleBoxes(page), []);
  }
  const boxes = middleBoxes({
    page_size: [100, 100],
    para_blocks: [
      null, 3, 'x', [],
      { type: { evil: 1 }, bbox: [0, 0, 10, 10] },
      { type: 'text', bbox: [0, 0, NaN, 10] },
      { type: 'text', bbox: ['1', '2', '3', '4'], lines: [null, { spans: [null, 7,
        { type: 'text', content: { x: 1 } }, { type: 'text', content: 'ok' }] }] },
      { type: 'image', bbox: [0, 0, 50, 50], blocks: [null, 'x', { type: 'image_body',
        bbox: [0, 0, 50, 50] }], sub_images: [null, { bbox: [0, 0, 1] }, { type: 'evil',
        bbox: [-5, 0, 9, 'x'] }] },
      { type: 'table', bbox: [0, 0, 10, 10], blocks: 'not a list' },
    ],
    discarded_blocks: { not: 'a list' },
  });
  assert.deepEqual(boxes.map(boxLabel), ['unknown', 'text', 'image_body', 'image · sub-image',
    'table']);
  assert.equal(boxes[1].text, 'ok');
  assertBox(boxes[3].bbox, [0, 0, 0.5, 0]);
  assert.deepEqual(documentBoxes(null, 'middle_json'), []);
  assert.deepEqual(documentBoxes({ model_json: 'x' }, 'model_json'), []);
  assert.deepEqual(documentBoxes({ model_json: [[null, 1, { bbox: [0, 0, 1, 1] }]] }, 'x')
    .map((p) => p.map(boxLabel)), [['unknown']]);
});

// Tests never assert on time: a quadratic walk would not finish these inputs within the test's
// timeout.
test('a huge page is drawn in linear time', () => {
  const n = 50000;
  const para = Array.from({ length: n }, (_, i) => ({ type: 'text', bbox: [0, i % 100, 10, 100],
    lines: [{ spans: [{ type: 'text', content: 'x'.repeat(1000) }] }] }));
  const boxes = middleBoxes({ page_size: [100, 100], para_blocks: para });
  assert.equal(boxes.length, n);
  assert.equal(boxes[0].text.length, 200);
  assert.equal(blockText({ lines: 'x' }), '');
});

// ---- Formulas in raw HTML (inline_math.js) -----------------------------------------------------

test('formulas inside a line of text', () => {
  // TV-34: a table cell of MinerU 3.4.4's Markdown holds " $x^2$ ".
  assert.deepEqual(splitInlineMath(' $x^2$ '), [' ', { tex: 'x^2', display: false }, ' ']);
  assert.deepEqual(splitInlineMath('for i in 1..n: $a_i < b$'),
    ['for i in 1..n: ', { tex: 'a_i < b', display: false }]);
  assert.deepEqual(splitInlineMath('$$ a+b $$'), [{ tex: 'a+b', display: true }]);
  assert.deepEqual(splitInlineMath('$5 and $10'), ['$5 and $10']);
  assert.deepEqual(splitInlineMath('a $ b $ c'), ['a $ b $ c']);
  assert.deepEqual(splitInlineMath('\\$x$'), ['\\$x$'], 'an escaped dollar opens nothing');
  assert.deepEqual(splitInlineMath('\\\\$x$'), ['\\\\', { tex: 'x', display: false }]);
  assert.deepEqual(splitInlineMath('$a$$b$'),
    [{ tex: 'a', display: false }, { tex: 'b', display: false }]);
  assert.deepEqual(splitInlineMath(''), []);
  assert.deepEqual(splitInlineMath('no math'), ['no math']);
});

test('the Markdown tokenizer still matches formulas exactly as before', () => {
  // The rules markdown.js used before they moved to inline_math.js.
  const before = (src) => {
    let m = /^\$\$((?:\\.|[^\\$])+?)\$\$/.exec(src);
    if (m) return { raw: m[0], text: m[1].trim(), display: true };
    m = /^\$(?![\s$])((?:\\.|[^\\$\n])+?)(?<!\s)\$(?!\d)/.exec(src);
    if (m) return { raw: m[0], text: m[1], display: false };
    return null;
  };
  for (const src of ['$x$', '$x$ y', '$$x$$', '$$ x $$ y', '$ x$', '$x $', '$x$1', '$x\ny$',
    '$\\$$', '$a\\$b$', '$$a\nb$$', '$$', '$', 'x$y$', '$x$$y$', '$5 and $10', '$\\frac{a}{b}$']) {
    assert.deepEqual(matchMathAt(src, 0), before(src), JSON.stringify(src));
  }
});

test('scanning many dollars is linear', () => {
  assert.equal(splitInlineMath('$ '.repeat(200000)).length, 1);
  assert.equal(splitInlineMath('\\'.repeat(200000) + '$x$').length, 2);
  assert.equal(splitInlineMath('$a$'.repeat(50000)).length, 50000);
});

// ---- The header's model and profile (api.js) ----------------------------------------------

test('the header names the profile the server runs', () => {
  assert.deepEqual(describeModel({ id: 'MinerU2.5-Pro-2605-1.2B', mineru_profile: 'pro' }), {
    text: 'MinerU2.5-Pro-2605-1.2B · MinerU2.5-Pro profile',
    title: 'Outputs as MinerU 3.4.4 writes them for MinerU2.5-Pro',
    profile: 'pro',
  });
  assert.deepEqual(describeModel({ id: 'tiny', mineru_profile: '2509' }), {
    text: 'tiny · MinerU2.5-2509 profile',
    title: 'Outputs as MinerU 2.7.6 writes them for MinerU2.5-2509',
    profile: '2509',
  });
  // A server without the field (before it was added) shows the id alone.
  assert.equal(describeModel({ id: 'tiny', object: 'model' }).text, 'tiny');
  assert.equal(describeModel({ id: 'tiny', object: 'model' }).profile, '');
  assert.equal(describeModel({ id: 'tiny', mineru_profile: 'next' }).text, 'tiny · profile next');
  assert.equal(describeModel({ id: 'tiny', mineru_profile: '__proto__' }).text,
    'tiny · profile __proto__');
  assert.equal(describeModel({ id: 'tiny', mineru_profile: 2509 }).text, 'tiny');
  assert.equal(describeModel({ id: 'x'.repeat(500) }).text.length, 100);
  for (const value of [null, undefined, 'pro', 3, {}, { id: 7 }]) {
    assert.equal(describeModel(value), null);
  }
});
