// SPDX-License-Identifier: Apache-2.0
// MinerU's per-request-kind sampling defaults (mineru_vl_utils DEFAULT_SAMPLING_PARAMS,
// docs/MINERU.md table 2.5), the parameter sets the pipeline puts on its layout and recognition
// requests. The engine's sampler (engine/sampling.h) knows nothing of MinerU; these are plain
// engine::SamplingParams values.
//
// All four are greedy (temperature 0, top_k 1, top_p 0.01), repetition_penalty 1 (off),
// no_repeat_ngram_size 100, no seed; they differ only in the presence and frequency penalties.
#pragma once

#include "engine/sampling.h"

namespace mineru::pipeline {

engine::SamplingParams MineruLayoutSampling();    // penalties 0
engine::SamplingParams MineruTableSampling();     // presence 1.0, frequency 0.005
engine::SamplingParams MineruEquationSampling();  // presence 1.0, frequency 0.05
engine::SamplingParams MineruDefaultSampling();   // text and every other kind: presence 1.0,
                                                  // frequency 0.05

}  // namespace mineru::pipeline
