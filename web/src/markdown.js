// SPDX-License-Identifier: Apache-2.0
// Markdown to safe HTML: marked parses (MinerU's tables arrive as raw HTML inside the Markdown),
// DOMPurify sanitizes, then KaTeX renders the formulas.
//
// Formulas ($...$ inline, $$...$$ display) are cut out by a marked extension before any other
// Markdown rule sees them (so "_" and "\\" inside TeX stay intact) and become empty placeholder
// elements carrying the TeX in data-tex. After sanitizing, katex.render() fills each one. KaTeX's
// output therefore never passes through DOMPurify (which would strip parts of its MathML), and
// KaTeX builds it with DOM calls, never from a markup string.
import { Marked } from './vendor/marked.esm.js';
import katex from './vendor/katex.mjs';
import DOMPurify from './vendor/purify.es.mjs';

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

// $$...$$ inside a line (display), and $...$ (inline): the opening $ is not followed by a space
// and the closing one not preceded by one nor followed by a digit, so "$5 and $10" stays text.
const mathInline = {
  name: 'mathInline',
  level: 'inline',
  start(src) {
    const i = src.indexOf('$');
    return i < 0 ? undefined : i;
  },
  tokenizer(src) {
    let m = /^\$\$((?:\\.|[^\\$])+?)\$\$/.exec(src);
    if (m) return { type: 'mathInline', raw: m[0], text: m[1].trim(), display: true };
    m = /^\$(?![\s$])((?:\\.|[^\\$\n])+?)(?<!\s)\$(?!\d)/.exec(src);
    if (m) return { type: 'mathInline', raw: m[0], text: m[1], display: false };
    return undefined;
  },
  renderer(token) {
    return placeholder('span', token.display, token.text);
  },
};

const marked = new Marked({ gfm: true, breaks: false });
marked.use({ extensions: [mathBlock, mathInline] });

// Markdown source -> sanitized HTML string with formula placeholders. rewriteImage(src) gives
// the URL for an image reference ("images/<name>.jpg" in MinerU's Markdown), or null to drop it.
export function markdownToSafeHtml(markdown, rewriteImage) {
  const html = marked.parse(markdown || '');
  // The hook runs inside DOMPurify's inert document, so the unrewritten URLs are never loaded.
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.nodeName === 'IMG' && node.hasAttribute('src')) {
      const url = rewriteImage(node.getAttribute('src'));
      if (url) node.setAttribute('src', url);
      else node.removeAttribute('src');
      node.setAttribute('loading', 'lazy');
    }
    if (node.nodeName === 'A' && node.hasAttribute('href')) {
      node.setAttribute('rel', 'noopener noreferrer');
    }
  });
  try {
    // No style attributes from documents: only KaTeX's own output carries any (see the CSP).
    return DOMPurify.sanitize(html, { FORBID_ATTR: ['style'], FORBID_TAGS: ['style'] });
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

// Renders markdown into container (replacing its content).
export function renderMarkdown(container, markdown, rewriteImage) {
  container.innerHTML = markdownToSafeHtml(markdown, rewriteImage);
  renderMath(container);
}
