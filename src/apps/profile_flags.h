// SPDX-License-Identifier: Apache-2.0
// The profile flags parse, serve and worker share (pipeline/profile.h): which client's rules and
// which MinerU output generation a checkpoint gets, and the Pro client's two switches MinerU 3.4
// turns on. The profile is chosen from the checkpoint's files (apps/model_profile.h) unless
// --profile forces it; the choice and its reason are printed at start.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

#include "apps/engine_flags.h"
#include "apps/model_options.h"
#include "base/status.h"
#include "engine/engine.h"
#include "pipeline/document.h"
#include "pipeline/profile.h"

namespace mineru::apps {

struct ProfileFlags {
  std::string profile = "auto";  // auto | 2509 | pro
  bool image_analysis = true;
  bool model_table_merge = true;

  void Register(CLI::App& cmd) {
    cmd.add_option("--profile", profile,
                   "Client rules and output generation: 2509 (mineru-vl-utils 0.1.22, MinerU "
                   "2.7.6 files), pro (mineru-vl-utils 1.2, MinerU 3.4.4 files), or auto (from "
                   "the checkpoint's files)")
        ->check(CLI::IsMember({"auto", "2509", "pro"}))
        ->capture_default_str();
    cmd.add_flag("--image-analysis,!--no-image-analysis", image_analysis,
                 "Pro: ask the model to analyse image and chart blocks (MinerU's image_analysis; "
                 "default on; a request's own field wins)");
    cmd.add_flag("--model-table-merge,!--no-model-table-merge", model_table_merge,
                 "Pro: ask the model whether cells of a table continued on the next page merge "
                 "(default on)");
  }

  std::optional<pipeline::Profile> Forced() const { return pipeline::ParseProfileName(profile); }

  // The pipeline's settings for `profile`: the client's rules, MinerU 3.4's switches for Pro.
  void Apply(pipeline::Profile chosen, pipeline::DocumentOptions& o) const {
    o.extract.profile = chosen;
    o.extract.image_analysis = image_analysis;
    o.model_table_merge = model_table_merge;
    o.extract.post_process.table_formula_eq_wrap = chosen == pipeline::Profile::kPro;
  }

  // What of these settings changes outputs, for cache keys (serve and worker must agree).
  std::string Fingerprint(pipeline::Profile chosen) const {
    std::string out = ";profile=" + std::string(pipeline::ProfileName(chosen));
    if (chosen == pipeline::Profile::kPro) {
      out += image_analysis ? ";image_analysis=1" : ";image_analysis=0";
      out += model_table_merge ? ";model_table_merge=1" : ";model_table_merge=0";
    }
    return out;
  }
};

// A started engine with the profile of its checkpoint.
struct PipelineEngine {
  std::unique_ptr<engine::Engine> engine;
  std::string model_dir;
  pipeline::ProfileChoice profile;
};

// StartEngine, then the profile (ChooseModelProfile over the --model argument and the
// directory) and the check that the tokenizer holds every token that profile's parsers need.
// Prints "profile: NAME (REASON)" to stderr.
Result<PipelineEngine> StartPipelineEngine(const std::string& model, const ModelLoadOptions& load,
                                           const EngineFlags& flags, int threads,
                                           std::string_view command, const ProfileFlags& profile);

}  // namespace mineru::apps
