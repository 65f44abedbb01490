// SPDX-License-Identifier: Apache-2.0
// The strings the tokenizer is checked on: lines, paragraphs and pages of text extracted from
// real documents (TEXT_DIR/*.txt, see extract-pdf-text.sh), then strings built to break
// tokenizers. Deterministic: the same inputs give the same list in the same order.
//
// Constructed strings use only code points assigned by Unicode 13, so that the engines compared
// (Node's ICU, Oniguruma 6.9, utf8proc 2.8) agree on every character property involved.
import fs from "node:fs";
import path from "node:path";

// mulberry32: a small seeded generator, so the "random" strings never change.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function fromDocuments(textDir) {
  const out = [];
  const files = fs.readdirSync(textDir).filter((f) => f.endsWith(".txt")).sort();
  for (const file of files) {
    const text = fs.readFileSync(path.join(textDir, file), "utf8");
    for (const line of text.split("\n")) if (line.trim() !== "") out.push(line);
    for (const para of text.split(/\n[ \t]*\n/)) if (para.trim() !== "") out.push(para);
    for (const page of text.split("\f")) if (page.trim() !== "") out.push(page);
  }
  return out;
}

const CONTRACTIONS = ["s", "t", "re", "ve", "m", "ll", "d"];

// Every upper/lower-case spelling of s.
function caseVariants(s) {
  let variants = [""];
  for (const c of s) {
    variants = variants.flatMap((v) => [v + c.toLowerCase(), v + c.toUpperCase()]);
  }
  return variants;
}

function contractions() {
  const out = [];
  for (const c of CONTRACTIONS) {
    for (const v of caseVariants(c)) {
      out.push(`'${v}`, `it'${v}`, `IT'${v} `, ` we'${v}ok`, `x '${v}'${v}`, `'${v}\n`);
      out.push(`don’${v}`, `1'${v}`, `é'${v}`);
    }
  }
  out.push("I'ſ", "'ſ", "DON'T", "can't've", "y'all'd've", "''s", "'''", "' s", "'\ns");
  return out;
}

const WHITESPACE = [
  " ", "  ", "\t", "\n", "\r", "\r\n", "\v", "\f", "\u0085", "\u00a0", "\u1680", "\u2000",
  "\u2003", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff", "\u200b",
  "\u180e",
];

function whitespace() {
  const out = [];
  for (const w of WHITESPACE) {
    out.push(w, `a${w}b`, `a${w}${w}b`, `${w}x`, `x${w}`, `x ${w}`, `${w} x`, `.${w}.`);
    out.push(`1${w}2`, `word${w}\n`, `\n${w}word`, `${w}${w}${w}`, `<|im_end|>${w}`);
  }
  for (const n of [2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 64, 100, 255, 256, 257, 1000]) {
    out.push(" ".repeat(n), "\n".repeat(n), "\t".repeat(n), "x" + " ".repeat(n) + "y");
    out.push(" ".repeat(n) + "x", "x" + " ".repeat(n), " \n".repeat(n), "\r\n".repeat(n));
    out.push("a" + "\n".repeat(n) + "b", "\u3000".repeat(n), "\u00a0".repeat(n));
    out.push(" ".repeat(n) + "\n" + " ".repeat(n) + "z");
  }
  return out;
}

function digits() {
  const out = [];
  for (const n of [1, 2, 3, 4, 5, 9, 10, 11, 50, 100, 333, 1000]) {
    out.push("7".repeat(n), "1234567890".repeat(Math.ceil(n / 10)).slice(0, n));
    out.push("x" + "9".repeat(n) + "y", "-" + "0".repeat(n) + ".5");
  }
  out.push(
    "3.14159265358979323846264338327950288419716939937510",
    "1,234,567.89", "12:30:45", "2005-01-03", "+49 (0)30 1234-5678", "0x7FFFFFFF", "1e-10",
    "٠١٢٣٤٥٦٧٨٩", "０１２３４５６７８９", "²³¹⁴", "½¾⅓", "Ⅻ ⅻ", "१२३", "๑๒๓", "①②③", "𝟘𝟙𝟚"
  );
  return out;
}

function scripts() {
  return [
    // Chinese, with fullwidth and ASCII punctuation and numbers
    "中文文本识别：表格、公式和图片。", "我们在2024年发布了MinerU。", "（注：见第3章）",
    "「引号」和『书名号』", "第一章 绪论\n1.1 研究背景", "价格为￥1,000元，约合$150。",
    "数学公式$E=mc^2$在正文中。", "表1：实验结果（单位：%）",
    // Japanese
    "日本語のテキストです。", "カタカナとひらがな、漢字が混ざる文章。", "ｶﾀｶﾅ ﾊﾝｶｸ",
    "が\u3099ぱ", "か\u3099き\u3099", "東京都千代田区１－１", "ーー〜〜！？",
    // Korean, composed and decomposed (NFC composes the jamo)
    "한국어 텍스트 인식", "\u1112\u1161\u11ab\u1100\u1173\u11af", "가\u11a8", "ㄱㄴㄷ ㅏㅑ",
    // Emoji: ZWJ families, skin tones, flags, keycaps, variation selectors
    "😀", "👩‍👩‍👧‍👦", "👨🏽‍💻", "🏳️‍🌈", "🇨🇳🇯🇵🇰🇷🇺🇸", "#️⃣1️⃣", "❤️❤", "☺︎☺️", "🫠🫡",
    "a😀b", "😀 😀", "👍🏻👍🏼👍🏽👍🏾👍🏿", "🧑‍🤝‍🧑",
    // Combining marks, NFC and NFD spellings, non-canonical mark order
    "é", "e\u0301", "Å", "A\u030a", "\u212b", "ñ", "n\u0303", "ḱ", "k\u0301",
    "a\u0301\u0323", "a\u0323\u0301", "q\u0307\u0323", "ệ", "e\u0323\u0302",
    "Tiếng Việt có dấu", "Tie\u0302\u0301ng Vie\u0323\u0302t", "Ω\u0301", "ϓ", "\u03d2\u0301",
    "\u0958", "\u0915\u093c", "\u09cb", "\u09c7\u09be", "\u0301", "\u0301\u0301x",
    "x\u20dd", "\u0338=", "≠", "=\u0338", "ﬁ ﬂ ﬃ", "Ⅸ", "㍿", "\u2126", "Ａ\u0301",
    // Right-to-left scripts and bidi controls
    "مرحبا بالعالم", "العربية: ١٢٣", "مَرْحَبًا", "שלום עולם", "שָׁלוֹם", "עברית 123 English",
    "\u200fRTL mark\u200e", "\u202bembedded\u202c", "\u2067isolate\u2069", "ایران فارسی",
    // Other scripts
    "Ελληνικά κείμενα", "Русский текст, ёЁ", "Українська ґҐ", "हिन्दी पाठ", "ไทย ภาษา",
    "ქართული", "Հայերեն", "አማርኛ", "ᚠᚢᚦ", "ⲁⲃⲅ", "𐌰𐌱𐌲", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "𝐀𝐁𝐂",
    "İstanbul ıi", "straße STRASSE ẞ", "ǅ ǈ ǋ", "ŉ", "K", "ﬀ",
  ];
}

function markup() {
  return [
    // LaTeX as MinerU writes formulas
    "\\frac{a}{b}", "$$\\sum_{i=1}^{n} x_i^2$$", "\\begin{array}{cc} a & b \\\\ c & d \\end{array}",
    "$\\alpha + \\beta = \\gamma$", "\\mathrm{d}x", "\\left( \\frac{1}{2} \\right)^{-1}",
    "\\int_0^\\infty e^{-x^2}\\,dx=\\frac{\\sqrt{\\pi}}{2}", "Q_{t}=\\sum_{j}\\lambda_{j}",
    "\\text{FDC}_{\\mathrm{95}}", "\\begin{aligned} f(x) &= x^2 \\\\ &\\geq 0 \\end{aligned}",
    "\\hat{y} = \\mathbf{W}^\\top \\mathbf{x} + b", "\\%\\&\\#\\_\\{\\}", "\\\\\\\\",
    // HTML tables as MinerU writes them
    "<table><tr><td>1</td><td>2</td></tr></table>",
    '<table><thead><tr><th rowspan="2">Year</th><th colspan="3">Flow (mm)</th></tr></thead>' +
      "<tbody><tr><td>1990</td><td>12.5</td><td>—</td><td>n/a</td></tr></tbody></table>",
    "<td></td><td> </td><td>&nbsp;</td><td>&lt;0.05</td>", "<br/><br>\n<hr />",
    "<img src=\"images/abc.jpg\"/>", "<sup>2</sup>H<sub>2</sub>O",
    // Markdown
    "# Title\n\n## Section 1.2\n\n- item\n- item\n\n> quote", "**bold** _it_ `code`",
    "| a | b |\n|---|---|\n| 1 | 2 |", "![](images/fig1.jpg)", "[^1]: footnote",
    // Code with tabs and CRLF
    "int main() {\r\n\treturn 0;\r\n}\r\n", "def f(x):\n\tif x:\n\t\treturn x\n",
    "a\tb\tc\r\n1\t2\t3\r\n", "\t\t\tdeep", "line1\rline2\rline3", "x = y  # comment\r\n\r\n",
    "for (i = 0; i < n; ++i) { s += a[i]; }", "{\"key\": [1, 2.5, null, true]}",
    "SELECT * FROM t WHERE a = 'b';", "#include <stdio.h>\n#define MAX(a,b) ((a)>(b)?(a):(b))",
    "https://github.com/opendatalab/MinerU?tab=readme#usage", "user@example.com",
    "C:\\Windows\\System32\\drivers", "~/.config/mineru.json",
  ];
}

function specialTokens() {
  const tokens = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
    "<|image_pad|>", "<|box_start|>", "<|box_end|>", "<|object_ref_start|>", "<|quad_end|>",
    "<|video_pad|>", "<tool_call>", "</think>",
  ];
  const out = [];
  for (const t of tokens) {
    out.push(t, `x${t}y`, ` ${t} `, `${t}${t}`, `\n${t}\n`, `${t.slice(0, -1)}`, `<${t}>`);
    out.push(`${t.slice(1)}`, `é${t}\u0301`, `${t}'s`);
  }
  out.push(
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n" +
      "<|vision_start|><|image_pad|><|vision_end|>\nText Recognition:<|im_end|>\n" +
      "<|im_start|>assistant\n",
    "<|im_start|", "|im_start|>", "<||>", "<|>", "<|im_start|><|im_end|>",
    "<|IM_START|>", "< |im_start| >", "<|im_start|>".repeat(20)
  );
  return out;
}

function mineruLayout() {
  const out = [];
  const r = rng(7);
  const kinds = ["title", "text", "table", "image", "equation", "header", "footer",
    "page_number", "table_caption", "image_caption", "ref_text", "list", "aside_text"];
  const rotations = ["<|rotate_up|>", "<|rotate_right|>", "<|rotate_down|>", "<|rotate_left|>"];
  for (let i = 0; i < 60; ++i) {
    let line = "";
    const n = 1 + Math.floor(r() * 6);
    for (let j = 0; j < n; ++j) {
      const box = Array.from({ length: 4 }, () => String(Math.floor(r() * 1000)).padStart(3, "0"));
      const kind = kinds[Math.floor(r() * kinds.length)];
      const rot = rotations[Math.floor(r() * rotations.length)];
      line += `<|box_start|>${box.join(" ")}<|box_end|><|ref_start|>${kind}<|ref_end|>${rot}\n`;
    }
    out.push(line);
  }
  out.push(
    "<fcel>Year<fcel>Flow<nl><fcel>1990<fcel>12.5<nl>", "<ecel><lcel><ucel><xcel><nl>",
    "<fcel>a<lcel><nl><ucel><xcel><nl>", "<|md_start|># Title<|md_end|><|txt_contd|>",
    "\nText Recognition:", "\nLayout Detection:", "\nTable Recognition:",
    "\nFormula Recognition:", "\nImage Analysis:", "\nDocument Parsing:"
  );
  return out;
}

// Random strings from a pool of pieces that interact at their borders.
function mixtures() {
  const atoms = [
    "the", "The", "THE", " of", "flow", "Duration", "'s", "'LL", "’", "n't", " ", "  ", "\t",
    "\n", "\r\n", "\n\n", ".", ",", ";", "...", "—", "–", "-", "(", ")", "[", "]", "{", "}", "\"",
    "'", "`", "%", "$", "€", "°C", "±", "×", "÷", "≤", "→", "•", "§", "©", "®", "™", "0", "42",
    "3.5", "1999", "中", "文字", "。", "，", "あ", "ア", "한", "글", "😀", "👩‍💻", "🇫🇷", "é",
    "e\u0301", "\u0301", "a\u0308", "\u00a0", "\u3000", "\u0085", "\ufeff", "\u200b",
    "\u2028", "ß", "İ", "ǅ", "ﬁ", "Ω", "م", "ש", "क", "ไ", "<|im_end|>", "<|image_pad|>",
    "<|box_start|>", "<think>", "\\frac", "^{2}", "_{i}", "<td>", "</td>", "&amp;", "http://",
    "@", "#", "*", "~", "|", "\\", "/", ":", "?", "!", "<", ">", "=", "+",
  ];
  const r = rng(20250929);
  const out = [];
  for (let i = 0; i < 2500; ++i) {
    const n = 1 + Math.floor(r() * 24);
    let s = "";
    for (let j = 0; j < n; ++j) s += atoms[Math.floor(r() * atoms.length)];
    out.push(s);
  }
  return out;
}

// Random code points from blocks fully assigned by Unicode 13 (letters, marks, digits,
// punctuation and symbols of many scripts).
function codePointSoup() {
  const ranges = [
    [0x20, 0x7e], [0xa0, 0x24f], [0x300, 0x36f], [0x391, 0x3a1], [0x3a3, 0x3ce],
    [0x400, 0x52f], [0x5d0, 0x5ea], [0x591, 0x5c7], [0x620, 0x64a], [0x64b, 0x669],
    [0x900, 0x97f], [0xe01, 0xe3a], [0x1e00, 0x1eff], [0x2010, 0x2027], [0x2030, 0x205e],
    [0x2070, 0x2071], [0x20a0, 0x20bf], [0x2100, 0x214f], [0x2190, 0x21ff], [0x2200, 0x22ff],
    [0x2460, 0x24ff], [0x2500, 0x257f], [0x3000, 0x303f], [0x3041, 0x3096], [0x30a1, 0x30fa],
    [0x3131, 0x318e], [0x4e00, 0x9fa5], [0xac00, 0xd7a3], [0xff01, 0xff5e], [0x1f300, 0x1f5ff],
    [0x1f600, 0x1f64f], [0x1d400, 0x1d454],
  ];
  const r = rng(1234);
  const out = [];
  for (let i = 0; i < 600; ++i) {
    const n = 1 + Math.floor(r() * 30);
    let s = "";
    for (let j = 0; j < n; ++j) {
      const [lo, hi] = ranges[Math.floor(r() * ranges.length)];
      s += String.fromCodePoint(lo + Math.floor(r() * (hi - lo + 1)));
    }
    out.push(s);
  }
  return out;
}

export function buildStrings(textDir) {
  const all = [
    ...fromDocuments(textDir), ...contractions(), ...whitespace(), ...digits(), ...scripts(),
    ...markup(), ...specialTokens(), ...mineruLayout(), ...mixtures(), ...codePointSoup(),
  ];
  return [...new Set(all)];
}
