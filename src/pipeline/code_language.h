// SPDX-License-Identifier: Apache-2.0
// The language of a code block, for middle.json's guess_lang and the Markdown fence.
// Deviation from MinerU, which asks magika (a learned classifier we do not ship).
#pragma once

#include <string>
#include <string_view>

namespace mineru::pipeline {

// A deterministic stand-in for MinerU's magika-based language guess: scores keyword signatures
// of python, cpp, c, java, javascript, go, rust, php, ruby, shell, sql, latex, html and json and
// returns the best label when its evidence is strong enough, else "txt" (magika's "unknown"
// maps to "txt" too). Labels use magika's names.
std::string GuessCodeLanguage(std::string_view code);

}  // namespace mineru::pipeline
