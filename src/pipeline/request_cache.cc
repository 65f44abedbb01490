// SPDX-License-Identifier: Apache-2.0
#include "pipeline/request_cache.h"

#include <fmt/format.h>

#include "base/sha256.h"

namespace mineru::pipeline {

std::optional<std::string> RequestCacheKey(const image::RgbImage& image, std::string_view prompt,
                                           const engine::SamplingParams& sampling,
                                           std::optional<int64_t> max_new_tokens) {
  if (!sampling.greedy() && !sampling.seed) return std::nullopt;
  // Floats as their exact decimal (%.9g round-trips a float): 0.05 and 0.050000001 differ.
  const std::string header = fmt::format(
      "req1|{}x{}|{}|t={:.9g};p={:.9g};k={};pp={:.9g};fp={:.9g};rp={:.9g};nr={};s={}|max={}|",
      image.width, image.height, prompt.size(), sampling.temperature, sampling.top_p,
      sampling.top_k, sampling.presence_penalty, sampling.frequency_penalty,
      sampling.repetition_penalty, sampling.no_repeat_ngram_size,
      sampling.seed ? std::to_string(*sampling.seed) : "-",
      max_new_tokens ? std::to_string(*max_new_tokens) : "-");
  Sha256 hasher;
  hasher.Update(header);
  hasher.Update(prompt);
  hasher.Update(std::span(image.pixels.data(), image.pixels.size()));
  return HexString(hasher.Finish());
}

}  // namespace mineru::pipeline
