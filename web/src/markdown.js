// SPDX-License-Identifier: Apache-2.0
// Markdown to safe HTML: marked parses (MinerU's tables arrive as raw HTML inside the Markdown),
// DOMPurify sanitizes, then KaTeX renders the formulas.
//
// Formulas ($...$ inline, $$...$$ display) are cut out by a marked extension before any other
// Markdown rule sees them (so "_" and "\\" inside TeX stay intact) and become empty placeholder
// elements carrying the TeX in data-tex. After sanitizing, katex.render() fills each one. KaTeX's
// output therefore never passes through DOMPurify (which would strip parts of its MathML), and
// KaTeX builds it with DOM calls, never from a markup string.
//
// MinerU 3.4.4's Markdown (MinerU2.5-Pro) also carries raw HTML that Markdown leaves alone: the
// image analysis of a figure or chart as <details><summary>SUB_TYPE</summary> ... </details>
// after its image (the inside is Markdown again: a chart's table renders as a table, a
// flowchart's ```mermaid fence as code, never run), formulas in table cells (" $x$ ") and
// algorithms as <div class="mineru-algorithm">. Those formulas are found in the sanitized DOM's
// text and get the same placeholders (markRawHtmlMath).
import { Marked } from './vendor/marked.esm.js';
import katex from './vendor/katex.mjs';
import DOMPurify from './vendor/purify.es.mjs';
import { matchMathAt, splitInlineMath } from './inline_math.js';

const escapeAttribute = (s) =>
  s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const placeholder = (tag, display, tex) =>
  `<${tag} class="math ${display ? 'math-display' : 'math-inline'}" ` +
  `data-tex="${escapeAttribute(tex)}"></${tag}>`;

// $$ ... $$ as a block of its own (MinerU writes "$$\n<tex>\n$$").
const mathBlock = {
  name: 'mathBlock',
  level: 'block',
  start(src) {
    const i = src.search(/(^|\n)\$\$/);
    return i < 0 ? undefined : i + (src[i] === '\n' ? 1 : 0);
  },
  tokenizer(src) {
    const m = /^\$\$([\s\S]+?)\$\$[^\S\n]*(?:\n+|$)/.exec(src);
    if (m) return { type: 'mathBlock', raw: m[0], text: m[1].trim() };
    return undefined;
  },
  renderer(token) {
    return placeholder('div', true, token.text) + '\n';
  },
};

// $$...$$ inside a line (display), and $...$ (inline), as inline_math.js defines them.
const mathInline = {
  name: 'mathInline',
  level: 'inline',
  start(src) {
    const i = src.indexOf('$');
    return i < 0 ? undefined : i;
  },
  tokenizer(src) {
    const m = matchMathAt(src, 0);
    return m ? { type: 'mathInline', ...m } : undefined;
  },
  renderer(token) {
    return placeholder('span', token.display, token.text);
  },
};

const marked = new Marked({ gfm: true, breaks: false });
marked.use({ extensions: [mathBlock, mathInline] });

const FORBIDDEN_TAGS = ['style', 'form', 'input', 'button', 'textarea', 'select'];

// Markdown source -> sanitized HTML string with formula placeholders. rewriteImage(src) gives
// the URL for an image reference ("images/<name>.jpg" in MinerU's Markdown), or null to drop it.
// With deferImages the URL goes into data-api-src instead of src, for auth.js's authorizeImages
// to load with the API key.
export function markdownToSafeHtml(markdown, rewriteImage, deferImages = false) {
  const html = marked.parse(markdown || '');
  // The hook runs inside DOMPurify's inert document, so the unrewritten URLs are never loaded.
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.nodeName === 'IMG') node.removeAttribute('data-api-src'); // only ours, below
    if (node.nodeName === 'IMG' && node.hasAttribute('src')) {
      const url = rewriteImage(node.getAttribute('src'));
      node.removeAttribute('src');
      if (url) node.setAttribute(deferImages ? 'data-api-src' : 'src', url);
      node.setAttribute('loading', 'lazy');
    }
    if (node.nodeName === 'A' && node.hasAttribute('href')) {
      node.setAttribute('rel', 'noopener noreferrer');
    }
  });
  try {
    // No style attributes from documents: only KaTeX's own output carries any (see the CSP).
    // No form controls either: a transcribed document never needs one, and a look-alike input
    // box inside a result would only mislead.
    return DOMPurify.sanitize(html, { FORBID_ATTR: ['style'], FORBID_TAGS: FORBIDDEN_TAGS });
  } finally {
    DOMPurify.removeHook('afterSanitizeAttributes');
  }
}

// Fills the formula placeholders under root. A formula KaTeX cannot parse is shown as its TeX
// source in KaTeX's error color, with the reason as a tooltip.
export function renderMath(root) {
  for (const el of root.querySelectorAll('.math[data-tex]')) {
    const tex = el.getAttribute('data-tex');
    try {
      katex.render(tex, el, {
        displayMode: el.classList.contains('math-display'),
        throwOnError: true,
        output: 'htmlAndMathml',
        strict: 'ignore',
        trust: false,
        maxSize: 50,
        maxExpand: 1000,
      });
    } catch (err) {
      el.textContent = tex;
      el.classList.add('math-error');
      el.title = err && err.message ? err.message : String(err);
    }
  }
}

// Where raw HTML carries $...$ formulas that Markdown did not tokenize (see the top).
const RAW_HTML_MATH = 'td, th, .mineru-algorithm';
// Text there that is not prose: code, and formulas already found.
const NOT_PROSE = 'code, pre, .math, .katex';

// Replaces the formulas in the text of table cells and algorithm blocks under root by
// placeholders (built with DOM calls; the TeX only ever becomes an attribute value), and drops
// the newlines framing an algorithm's body.
export function markRawHtmlMath(root) {
  const doc = root.ownerDocument;
  const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!node.data.includes('$') || !parent || !parent.closest(RAW_HTML_MATH)) continue;
    if (!parent.closest(NOT_PROSE)) texts.push(node);
  }
  for (const node of texts) {
    const pieces = splitInlineMath(node.data);
    if (pieces.length === 1 && typeof pieces[0] === 'string') continue;
    const parts = pieces.map((piece) => {
      if (typeof piece === 'string') return doc.createTextNode(piece);
      const el = doc.createElement(piece.display ? 'div' : 'span');
      el.className = `math ${piece.display ? 'math-display' : 'math-inline'}`;
      el.setAttribute('data-tex', piece.tex);
      return el;
    });
    node.replaceWith(...parts);
  }
  // MinerU writes "<div ...>\nBODY\n</div>"; pre-wrap would show those two newlines.
  for (const el of root.querySelectorAll('.mineru-algorithm')) {
    const first = el.firstChild;
    if (first && first.nodeType === Node.TEXT_NODE) first.data = first.data.replace(/^\n/, '');
    const last = el.lastChild;
    if (last && last.nodeType === Node.TEXT_NODE) last.data = last.data.replace(/\n$/, '');
  }
}

// Renders markdown into container (replacing its content).
export function renderMarkdown(container, markdown, rewriteImage, deferImages = false) {
  container.innerHTML = markdownToSafeHtml(markdown, rewriteImage, deferImages);
  markRawHtmlMath(container);
  renderMath(container);
}
