// SPDX-License-Identifier: Apache-2.0
// The server the web UI's browser test drives: every route of `mineru-cpp serve`
// (service::AddServiceRoutes) on the tiny random checkpoint in argv[1], which answers chat
// requests and the text blocks of documents. A random model never writes a layout, so a script
// answers the layout step (a title, text, a table, an equation and an image on every page) and
// the table and equation blocks (an OTSL table, a LaTeX formula): the boxes, HTML tables and
// KaTeX formulas the UI must show then exist, while everything else runs for real.
//
//   webui_test_server MODEL_DIR [API_KEY]  -> prints "listening on http://127.0.0.1:PORT";
//   SIGTERM stops. With API_KEY every route but the probes and the UI's files needs it (as
//   `serve --api-key`); the cross-site checks are on, as in `serve`.
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cache/block_cache.h"
#include "model/model.h"
#include "pipeline/block_requests.h"
#include "pipeline/generator.h"
#include "service/routes.h"
#include "tasks/task_manager.h"

namespace {

using namespace mineru;

constexpr std::string_view kLayout =
    "<|box_start|>080 040 920 090<|box_end|><|ref_start|>title<|ref_end|><|rotate_up|>\n"
    "<|box_start|>080 110 920 250<|box_end|><|ref_start|>text<|ref_end|><|rotate_up|>\n"
    "<|box_start|>080 270 920 420<|box_end|><|ref_start|>table<|ref_end|><|rotate_up|>\n"
    "<|box_start|>200 440 800 500<|box_end|><|ref_start|>equation<|ref_end|><|rotate_up|>\n"
    "<|box_start|>080 520 600 800<|box_end|><|ref_start|>image<|ref_end|><|rotate_up|>";

// The task prompt of a request (its text parts).
std::string Prompt(const engine::Request& request) {
  std::string prompt;
  for (const text::ChatMessage& message : request.messages) {
    for (const text::ChatPart& part : message.content) {
      if (part.kind == text::ChatPart::Kind::kText) prompt += part.text;
    }
  }
  return prompt;
}

// Scripted answers for the layout, table and equation prompts; the engine for the rest.
class ScriptedLayoutGenerator final : public pipeline::Generator {
 public:
  explicit ScriptedLayoutGenerator(engine::Engine& engine) : engine_(engine) {}
  Result<engine::RequestHandle> Submit(engine::Request request) override {
    const std::string prompt = Prompt(request);
    std::string answer;
    if (prompt == pipeline::kLayoutPrompt) {
      answer = kLayout;
    } else if (prompt == pipeline::kTablePrompt) {
      answer = "<fcel>Model<fcel>Pages/s<nl><fcel>tiny<fcel>42<nl>";
    } else if (prompt == pipeline::kEquationPrompt) {
      answer = "E = m c^{2} \\quad \\int_0^1 x^2 \\, dx = \\frac{1}{3}";
    } else {
      return engine_.Submit(std::move(request));
    }
    auto state = std::make_shared<engine::RequestState>(nullptr);
    engine::GenerationResult result;
    result.finish_reason = engine::FinishReason::kStop;
    result.text = std::move(answer);
    state->Finish(std::move(result));
    return engine::RequestHandle(state);
  }

 private:
  engine::Engine& engine_;
};

int Fail(const std::string& what) {
  std::fprintf(stderr, "webui_test_server: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) return Fail("usage: webui_test_server MODEL_DIR [API_KEY]");
  const std::string model_dir = argv[1];
  const std::string api_key = argc == 3 ? argv[2] : "";
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  service::ServiceMetrics metrics;
  engine::EngineOptions engine_options;
  jobs::TaskManagerOptions task_options;
  service::ConnectMetrics(metrics, engine_options, task_options);
  auto model = model::Model::Load(model_dir);
  if (!model) return Fail(model.error().ToString());
  auto engine = engine::Engine::Create(std::shared_ptr<const model::Model>(std::move(*model)),
                                       model_dir, engine_options);
  if (!engine) return Fail(engine.error().ToString());
  ScriptedLayoutGenerator generator(**engine);
  char work_dir[] = "/tmp/mineru-webui-XXXXXX";
  if (mkdtemp(work_dir) == nullptr) return Fail("cannot create a work directory");
  task_options.work_dir = work_dir;
  task_options.document.extract.max_new_tokens = 24;  // random text: keep it short
  task_options.document.render.helper_path = MINERU_PDF_RENDER_BUILD_PATH;
  // One block cache for the pages and the chat API, as `serve` builds it.
  jobs::BlockCache block_cache(jobs::kDefaultBlockCacheBytes, task_options.model_fingerprint);
  task_options.block_cache = &block_cache;
  auto tasks = jobs::TaskManager::Create(generator, task_options);
  if (!tasks) return Fail(tasks.error().ToString());

  service::HttpServer server;
  service::RouteOptions routes;
  routes.openai.model_id = "tiny-mineru";
  routes.openai.cache = &block_cache;
  service::AddServiceRoutes(server, engine->get(), **tasks, metrics, routes);
  service::ServerOptions options;
  options.port = 0;
  options.handler_threads = 16;
  options.api_key = api_key;
  options.check_cross_site = true;
  options.on_request = [&metrics](const service::RequestRecord& r) { metrics.ObserveHttp(r); };
  if (auto started = server.Start(options); !started) return Fail(started.error().ToString());
  std::fprintf(stderr, "listening on http://127.0.0.1:%d\n", server.port());

  int signal_number = 0;
  while (sigwait(&signals, &signal_number) != 0) {
  }
  server.BeginDrain();
  server.Stop(std::chrono::seconds(5));
  tasks->reset();
  std::error_code ec;
  std::filesystem::remove_all(work_dir, ec);
  return 0;
}
