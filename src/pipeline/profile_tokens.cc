// SPDX-License-Identifier: Apache-2.0
#include "pipeline/profile_tokens.h"

#include <array>

namespace mineru::pipeline {
namespace {

constexpr std::array<std::string_view, 14> k2509Tokens = {
    "<|box_start|>",    "<|box_end|>",     "<|ref_start|>",   "<|ref_end|>", "<|rotate_up|>",
    "<|rotate_right|>", "<|rotate_down|>", "<|rotate_left|>", "<fcel>",      "<ecel>",
    "<lcel>",           "<ucel>",          "<xcel>",          "<nl>"};

constexpr std::array<std::string_view, 17> kProTokens = {
    "<|box_start|>",    "<|box_end|>",     "<|ref_start|>",   "<|ref_end|>", "<|rotate_up|>",
    "<|rotate_right|>", "<|rotate_down|>", "<|rotate_left|>", "<fcel>",      "<ecel>",
    "<lcel>",           "<ucel>",          "<xcel>",          "<nl>",        "<ched>",
    "<|txt_contd|>",    "<|paratext|>"};

}  // namespace

std::span<const std::string_view> RequiredAddedTokens(Profile profile) {
  if (profile == Profile::kPro) return kProTokens;
  return k2509Tokens;
}

}  // namespace mineru::pipeline
