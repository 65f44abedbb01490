// SPDX-License-Identifier: Apache-2.0
// Engine creation, request validation and submission (any thread), and the engine thread's
// loop. One iteration of scheduling lives in scheduler.cc.
#include <algorithm>
#include <filesystem>

#include "engine/engine_impl.h"
#include "engine/generation_config.h"
#include "text/chat_template_file.h"

namespace mineru::engine {

Status EngineOptions::Validate() const {
  auto positive = [](int64_t value, std::string_view name) -> Status {
    if (value <= 0)
      return Fail(ErrorCode::kInvalidArgument, "{} must be positive, not {}", name, value);
    return OkStatus();
  };
  MINERU_RETURN_IF_ERROR(positive(kv_cache_bytes, "kv_cache_bytes"));
  MINERU_RETURN_IF_ERROR(positive(kv_block_tokens, "kv_block_tokens"));
  if (kv_block_tokens % ops::kKvAlign != 0) {
    return Fail(ErrorCode::kInvalidArgument, "kv_block_tokens must be a multiple of {}, not {}",
                ops::kKvAlign, kv_block_tokens);
  }
  MINERU_RETURN_IF_ERROR(positive(max_running, "max_running"));
  MINERU_RETURN_IF_ERROR(positive(max_waiting, "max_waiting"));
  MINERU_RETURN_IF_ERROR(positive(max_batch_tokens, "max_batch_tokens"));
  MINERU_RETURN_IF_ERROR(positive(vision_max_images, "vision_max_images"));
  MINERU_RETURN_IF_ERROR(positive(vision_max_patches, "vision_max_patches"));
  MINERU_RETURN_IF_ERROR(positive(max_images_per_request, "max_images_per_request"));
  if (vision_max_wait.count() < 0) {
    return Fail(ErrorCode::kInvalidArgument, "vision_max_wait must not be negative");
  }
  if (max_context < 0) {
    return Fail(ErrorCode::kInvalidArgument, "max_context must not be negative, not {}",
                max_context);
  }
  return OkStatus();
}

Result<std::unique_ptr<Engine>> Engine::Create(std::shared_ptr<const model::Model> model,
                                               const std::string& model_dir,
                                               const EngineOptions& options) {
  if (model == nullptr) return Fail(ErrorCode::kInvalidArgument, "no model");
  MINERU_RETURN_IF_ERROR(options.Validate());
  const model::ModelConfig& config = model->config();
  auto impl = std::make_unique<Impl>(model, options);
  MINERU_ASSIGN_OR_RETURN(impl->default_stop_ids_, ReadStopIds(model_dir, config));
  std::error_code ec;
  if (std::filesystem::exists(model_dir + "/tokenizer.json", ec)) {
    MINERU_ASSIGN_OR_RETURN(impl->tokenizer_, text::Tokenizer::Load(model_dir + "/tokenizer.json"));
    // Prompts are rendered by the built-in Qwen2-VL renderer: refuse a checkpoint whose own
    // template would render something else (text/chat_template_file.h).
    MINERU_ASSIGN_OR_RETURN(auto chat_template, text::FindChatTemplate(model_dir));
    MINERU_RETURN_IF_ERROR(text::CheckChatTemplate(chat_template));
  }
  if (std::filesystem::exists(model_dir + "/preprocessor_config.json", ec)) {
    MINERU_ASSIGN_OR_RETURN(impl->processor_, image::ReadImageProcessorConfig(model_dir));
  }
  const int64_t position_limit = config.text.max_position_embeddings;
  impl->max_context_ =
      options.max_context > 0 ? std::min(options.max_context, position_limit) : position_limit;
  const int64_t block_bytes = model->KvBlockBytes(options.kv_block_tokens);
  const int64_t blocks = options.kv_cache_bytes / block_bytes;
  if (blocks < 1) {
    return Fail(ErrorCode::kInvalidArgument,
                "kv_cache_bytes {} holds no block: one block of {} tokens takes {} bytes",
                options.kv_cache_bytes, options.kv_block_tokens, block_bytes);
  }
  impl->kv_capacity_tokens_ = blocks * options.kv_block_tokens;
  impl->Start();
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::~Engine() = default;

Result<RequestHandle> Engine::Submit(Request request) { return impl_->Submit(std::move(request)); }
EngineStats Engine::Stats() const { return impl_->Stats(); }
const EngineOptions& Engine::options() const { return impl_->options_; }
const model::Model& Engine::model() const { return *impl_->model_; }
const std::vector<int32_t>& Engine::default_stop_ids() const { return impl_->default_stop_ids_; }
const text::Tokenizer* Engine::tokenizer() const { return impl_->tokenizer_.get(); }

Engine::Impl::Impl(std::shared_ptr<const model::Model> model, const EngineOptions& options)
    : model_(std::move(model)), options_(options) {}

void Engine::Impl::Start() {
  pool_ = std::make_unique<ThreadPool>(options_.threads);
  const int64_t block_bytes = model_->KvBlockBytes(options_.kv_block_tokens);
  const int64_t blocks = options_.kv_cache_bytes / block_bytes;
  cache_ = std::make_unique<model::KvCache>(model_->NewKvCache(options_.kv_block_tokens, blocks));
  planner_ = std::make_unique<Planner>(options_, blocks);
  local_.kv_blocks_total = blocks;
  local_.kv_block_bytes = block_bytes;
  stats_ = local_;
  thread_ = std::thread([this] { Loop(); });
}

Engine::Impl::~Impl() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Result<std::unique_ptr<Sequence>> Engine::Impl::Prepare(Request request) {
  const model::ModelConfig& config = model_->config();
  const int64_t merge = config.vision.spatial_merge_size;
  MINERU_RETURN_IF_ERROR(request.sampling.Validate());
  for (const auto& [token, bias] : request.sampling.logit_bias) {
    if (token >= config.text.vocab_size) {
      return Fail(ErrorCode::kInvalidArgument,
                  "logit_bias token {} is outside the vocabulary of {}", token,
                  config.text.vocab_size);
    }
  }
  if (request.messages.empty() == request.prompt_ids.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                "a request needs either chat messages or prompt ids (exactly one)");
  }
  if (static_cast<int64_t>(request.images.size()) > options_.max_images_per_request) {
    return Fail(ErrorCode::kInvalidArgument, "{} images in one request; the limit is {}",
                request.images.size(), options_.max_images_per_request);
  }
  auto seq = std::make_unique<Sequence>();
  const int64_t patch_dim = config.vision.in_channels * config.vision.temporal_patch_size *
                            config.vision.patch_size * config.vision.patch_size;
  for (size_t i = 0; i < request.images.size(); ++i) {
    ImageInput& image = request.images[i];
    if (image.rgb) {
      if (!processor_) {
        return Fail(ErrorCode::kInvalidArgument,
                    "image {} is RGB but the model has no preprocessor_config.json", i);
      }
      MINERU_ASSIGN_OR_RETURN(
          image::ResizedSize size,
          image::SmartResize(image.rgb->height, image.rgb->width, processor_->factor(),
                             processor_->min_pixels, processor_->max_pixels));
      // A still image is one temporal group (its frame repeated temporal_patch_size times).
      image.grid = {1, size.height / processor_->patch_size, size.width / processor_->patch_size};
    } else {
      const model::ImageGrid& g = image.grid;
      if (g.t < 1 || g.h < merge || g.w < merge || g.h % merge != 0 || g.w % merge != 0) {
        return Fail(ErrorCode::kInvalidArgument,
                    "image {}: grid {}x{}x{} is not positive multiples of the merge size {}", i,
                    g.t, g.h, g.w, merge);
      }
      if (static_cast<int64_t>(image.pixel_values.size()) != g.patches() * patch_dim) {
        return Fail(ErrorCode::kInvalidArgument,
                    "image {}: {} pixel values for a {}x{}x{} grid of {} floats per patch", i,
                    image.pixel_values.size(), g.t, g.h, g.w, patch_dim);
      }
    }
    seq->grids.push_back(image.grid);
  }
  if (!request.messages.empty()) {
    if (!tokenizer_) {
      return Fail(ErrorCode::kInvalidArgument, "chat messages need the model's tokenizer.json");
    }
    size_t next_image = 0;
    for (text::ChatMessage& message : request.messages) {
      for (text::ChatPart& part : message.content) {
        if (part.kind != text::ChatPart::Kind::kImage) continue;
        if (next_image == seq->grids.size()) {
          return Fail(ErrorCode::kInvalidArgument,
                      "the messages hold more images than the {} given", seq->grids.size());
        }
        const model::ImageGrid& g = seq->grids[next_image++];
        part.grid = {g.t, g.h, g.w};
      }
    }
    if (next_image != seq->grids.size()) {
      return Fail(ErrorCode::kInvalidArgument, "{} images given but the messages hold {}",
                  seq->grids.size(), next_image);
    }
    text::ChatTemplateOptions template_options;
    template_options.spatial_merge_size = merge;
    MINERU_ASSIGN_OR_RETURN(text::ChatPrompt prompt,
                            text::BuildChatPrompt(*tokenizer_, request.messages, template_options));
    seq->prompt = std::move(prompt.ids);
  } else {
    seq->prompt = std::move(request.prompt_ids);
  }
  const auto prompt_length = static_cast<int64_t>(seq->prompt.size());
  for (int32_t id : seq->prompt) {
    if (id < 0 || id >= config.text.vocab_size) {
      return Fail(ErrorCode::kInvalidArgument, "prompt token {} is outside the vocabulary of {}",
                  id, config.text.vocab_size);
    }
  }
  if (prompt_length >= max_context_) {
    return Fail(ErrorCode::kInvalidArgument,
                "the prompt has {} tokens; the context holds {} (prompt and output)", prompt_length,
                max_context_);
  }
  if (prompt_length >= kv_capacity_tokens_) {
    return Fail(ErrorCode::kInvalidArgument,
                "the prompt has {} tokens; the KV cache holds {} (raise kv_cache_bytes)",
                prompt_length, kv_capacity_tokens_);
  }
  MINERU_ASSIGN_OR_RETURN(seq->positions,
                          model::ComputeRopePositions(seq->prompt, seq->grids, config));
  int32_t row = 0;
  seq->vision_row_of.assign(seq->prompt.size(), -1);
  if (!seq->grids.empty()) {
    for (size_t i = 0; i < seq->prompt.size(); ++i) {
      if (seq->prompt[i] == config.image_token_id) seq->vision_row_of[i] = row++;
    }
  }
  seq->image_tokens = row;
  if (request.max_new_tokens && *request.max_new_tokens < 1) {
    return Fail(ErrorCode::kInvalidArgument, "max_new_tokens must be at least 1, not {}",
                *request.max_new_tokens);
  }
  // Unset: the remaining context. Never more than one sequence can hold in the whole cache.
  const int64_t room = std::min(max_context_, kv_capacity_tokens_) - prompt_length;
  seq->max_new_tokens = std::min(request.max_new_tokens.value_or(room), room);
  seq->stop_ids = request.stop_ids.value_or(default_stop_ids_);
  for (int32_t id : seq->stop_ids) {
    if (id < 0 || id >= config.text.vocab_size) {
      return Fail(ErrorCode::kInvalidArgument, "stop id {} is outside the vocabulary of {}", id,
                  config.text.vocab_size);
    }
  }
  seq->sampler = std::make_unique<Sampler>(request.sampling, seq->prompt, config.text.vocab_size);
  seq->images = std::move(request.images);
  seq->sched.priority = request.priority;
  seq->sched.deadline = request.deadline;
  seq->sched.images = static_cast<int64_t>(seq->grids.size());
  for (const model::ImageGrid& g : seq->grids) seq->sched.patches += g.patches();
  seq->sched.vision_pending = !seq->grids.empty();
  seq->sched.prompt_tokens = prompt_length;
  seq->keep_logits = request.keep_logits;
  seq->decode_text = request.decode_text;
  seq->state = std::make_shared<RequestState>(std::move(request.on_token));
  return seq;
}

Result<RequestHandle> Engine::Impl::Submit(Request request) {
  auto prepared = Prepare(std::move(request));
  std::lock_guard lock(mutex_);
  if (!prepared) {
    ++stats_.rejected;
    return tl::unexpected(prepared.error());
  }
  if (stopping_) return Fail(ErrorCode::kUnavailable, "the engine is shutting down");
  if (queued_ >= options_.max_waiting) {
    ++stats_.rejected;
    return Fail(ErrorCode::kResourceExhausted,
                "{} requests already wait for the engine (max_waiting); try again later", queued_);
  }
  std::unique_ptr<Sequence> seq = std::move(*prepared);
  seq->sched.id = next_arrival_++;
  seq->submitted = Clock::now();
  RequestHandle handle(seq->state);
  inbox_.push_back(std::move(seq));
  ++queued_;
  ++stats_.submitted;
  wake_.notify_one();
  return handle;
}

EngineStats Engine::Impl::Stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void Engine::Impl::Loop() {
  while (true) {
    {
      std::unique_lock lock(mutex_);
      if (stopping_) break;
    }
    if (Iterate()) continue;
    // Nothing ran: sleep until a submission, or, while requests wait (for the vision batch,
    // for KV blocks), poll their timers and cancels every 2 ms.
    std::unique_lock lock(mutex_);
    auto woken = [&] { return stopping_ || !inbox_.empty(); };
    if (live_.empty()) {
      wake_.wait(lock, woken);
    } else {
      wake_.wait_for(lock, std::chrono::milliseconds(2), woken);
    }
  }
  // Shut down: everything unfinished ends with an error.
  TakeSubmissions();
  for (const auto* list : {&planner_->waiting(), &planner_->running()}) {
    const std::vector<ScheduledSequence*> ending = *list;  // Finish takes them out of the list
    for (ScheduledSequence* seq : ending) {
      Finish(Live(seq->id), FinishReason::kError, "engine shut down");
    }
  }
  RemoveFinished();
  SyncQueued();
  PublishStats();
}

}  // namespace mineru::engine
