// SPDX-License-Identifier: Apache-2.0
// MinerU 3.4's mineru-api form fields as ReadUpload reads them (service/upload_form.h,
// service/mineru_form.h): backend names and their 2.x aliases, effort, parse_method, the public
// OCR language list, image_analysis and what hybrid medium effort does to it,
// return_original_file (ZIP only), client_side_output_generation forcing the return flags,
// server_url, output_dir ignored; MinerU's error texts; and the parse options' cache key.
#include "service/mineru_form.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "../support/http_client.h"
#include "service/upload_form.h"
#include "tasks/task.h"

namespace mineru::service {
namespace {

using testing_support::FormPart;

constexpr char kAllowedBackends[] =
    "Invalid backend. Allowed values: pipeline, vlm-engine, hybrid-engine, vlm-http-client, "
    "hybrid-http-client";
constexpr char kAllowedLanguages[] =
    "Allowed values: ch, ch_server, korean, ta, te, ka, th, el, arabic, east_slavic, cyrillic, "
    "devanagari";

// A form with one PNG file part and `fields`, read as a request would be.
Result<Upload> Read(const std::vector<FormPart>& fields) {
  std::vector<FormPart> parts = {{"files", "\x89PNG\r\n\x1a\n", "a.png", "image/png"}};
  parts.insert(parts.end(), fields.begin(), fields.end());
  HttpRequest request;
  std::string content_type;
  request.body = testing_support::MultipartBody(parts, &content_type);
  request.headers["Content-Type"] = content_type;
  return ReadUpload(request);
}

Upload ReadOk(const std::vector<FormPart>& fields) {
  auto upload = Read(fields);
  EXPECT_TRUE(upload) << upload.error().ToString();
  return upload ? std::move(*upload) : Upload{};
}

std::string ReadError(const std::vector<FormPart>& fields) {
  auto upload = Read(fields);
  EXPECT_FALSE(upload);
  return upload ? std::string() : upload.error().message;
}

TEST(MineruFormTest, DefaultsWhenNothingIsSent) {
  const Upload u = ReadOk({});
  EXPECT_EQ(u.backend, "");
  EXPECT_EQ(u.mineru.effort, "medium");
  EXPECT_EQ(u.mineru.parse_method, "auto");
  EXPECT_EQ(u.mineru.lang_list, std::vector<std::string>{"ch"});
  EXPECT_FALSE(u.mineru.server_url);
  EXPECT_FALSE(u.mineru.client_side_output_generation);
  EXPECT_FALSE(u.options.image_analysis);
  EXPECT_TRUE(u.returns.md);
  EXPECT_FALSE(u.returns.zip);
  EXPECT_FALSE(u.returns.original_file);
}

TEST(MineruFormTest, BackendsAndTheirAliases) {
  for (const char* backend :
       {"pipeline", "vlm-engine", "hybrid-engine", "vlm-http-client", "hybrid-http-client"}) {
    EXPECT_EQ(ReadOk({{"backend", backend}}).backend, backend);
  }
  EXPECT_EQ(ReadOk({{"backend", "vlm-auto-engine"}}).backend, "vlm-engine");
  EXPECT_EQ(ReadOk({{"backend", "hybrid-auto-engine"}}).backend, "hybrid-engine");
  for (const char* refused : {"vlm-transformers", "vlm-vllm-engine", "", "Pipeline", "hybrid"}) {
    EXPECT_EQ(ReadError({{"backend", refused}}), kAllowedBackends) << refused;
  }
}

TEST(MineruFormTest, EffortAndParseMethod) {
  EXPECT_EQ(ReadOk({{"effort", "high"}}).mineru.effort, "high");
  EXPECT_EQ(ReadOk({{"effort", "medium"}}).mineru.effort, "medium");
  EXPECT_EQ(ReadError({{"effort", "low"}}), "Invalid effort. Allowed values: medium, high");
  for (const char* method : {"auto", "txt", "ocr"}) {
    EXPECT_EQ(ReadOk({{"parse_method", method}}).mineru.parse_method, method);
  }
  EXPECT_EQ(ReadError({{"parse_method", "OCR"}}),
            "Invalid parse_method. Allowed values: auto, ocr, txt");
  // MinerU checks the backend first.
  EXPECT_EQ(ReadError({{"parse_method", "x"}, {"effort", "x"}, {"backend", "x"}}),
            kAllowedBackends);
  EXPECT_EQ(ReadError({{"parse_method", "x"}, {"effort", "x"}}),
            "Invalid effort. Allowed values: medium, high");
}

TEST(MineruFormTest, LanguagesFromThePublicOcrList) {
  const Upload u = ReadOk({{"lang_list", "korean"}, {"lang_list", "en"}, {"lang_list", "th"}});
  EXPECT_EQ(u.mineru.lang_list, (std::vector<std::string>{"korean", "ch", "th"}));
  for (std::string_view lang : kMineruOcrLanguages) {
    EXPECT_EQ(ReadOk({{"lang_list", std::string(lang)}}).mineru.lang_list,
              std::vector<std::string>{std::string(lang)});
  }
  for (const char* alias : {"en", "japan", "chinese_cht", "latin"}) {
    EXPECT_EQ(ReadOk({{"lang_list", alias}}).mineru.lang_list, std::vector<std::string>{"ch"});
  }
  EXPECT_EQ(ReadError({{"lang_list", "ch_lite"}}),
            std::string("Language ch_lite not supported. ") + kAllowedLanguages);
  EXPECT_EQ(ReadError({{"lang_list", "ch"}, {"lang_list", "en,ch"}}),
            std::string("Language en,ch not supported. ") + kAllowedLanguages);
  EXPECT_EQ(ReadError({{"lang_list", ""}}),
            std::string("Language  not supported. ") + kAllowedLanguages);
}

TEST(MineruFormTest, ImageAnalysisAndHybridMediumEffort) {
  EXPECT_EQ(ReadOk({{"image_analysis", "false"}}).options.image_analysis, false);
  EXPECT_EQ(ReadOk({{"image_analysis", "true"}}).options.image_analysis, true);
  EXPECT_NE(ReadError({{"image_analysis", "maybe"}}).find("image_analysis"), std::string::npos);
  // Hybrid backends analyse images only with effort high; VLM backends ignore effort.
  EXPECT_EQ(ReadOk({{"backend", "hybrid-engine"}}).options.image_analysis, false);
  EXPECT_EQ(ReadOk({{"backend", "hybrid-http-client"}, {"image_analysis", "true"}})
                .options.image_analysis,
            false);
  EXPECT_EQ(ReadOk({{"backend", "hybrid-auto-engine"}, {"effort", "high"}}).options.image_analysis,
            std::nullopt);
  EXPECT_EQ(ReadOk({{"backend", "hybrid-engine"}, {"effort", "high"}, {"image_analysis", "1"}})
                .options.image_analysis,
            true);
  EXPECT_EQ(ReadOk({{"backend", "vlm-engine"}, {"effort", "medium"}}).options.image_analysis,
            std::nullopt);
  EXPECT_EQ(ReadOk({{"backend", "vlm-engine"}, {"image_analysis", "off"}}).options.image_analysis,
            false);
}

TEST(MineruFormTest, OriginalFileOnlyWithZip) {
  EXPECT_FALSE(ReadOk({{"return_original_file", "true"}}).returns.original_file);
  const Upload zipped = ReadOk({{"return_original_file", "true"}, {"response_format_zip", "true"}});
  EXPECT_TRUE(zipped.returns.original_file);
  EXPECT_TRUE(zipped.returns.zip);
  EXPECT_FALSE(ReadOk({{"response_format_zip", "true"}}).returns.original_file);
  EXPECT_NE(ReadError({{"return_original_file", "2"}}).find("return_original_file"),
            std::string::npos);
}

TEST(MineruFormTest, ClientSideOutputGenerationForcesTheReturnFlags) {
  // Whatever order the fields come in and whatever they say.
  for (const bool first : {true, false}) {
    std::vector<FormPart> fields = {{"return_md", "true"},
                                    {"return_content_list", "true"},
                                    {"return_middle_json", "false"},
                                    {"return_model_output", "false"},
                                    {"return_images", "false"}};
    const FormPart flag{"client_side_output_generation", "true"};
    fields.insert(first ? fields.begin() : fields.end(), flag);
    const Upload u = ReadOk(fields);
    EXPECT_TRUE(u.mineru.client_side_output_generation);
    EXPECT_FALSE(u.returns.md);
    EXPECT_TRUE(u.returns.middle_json);
    EXPECT_TRUE(u.returns.model_output);
    EXPECT_FALSE(u.returns.content_list);
    EXPECT_TRUE(u.returns.images);
  }
  const Upload off = ReadOk({{"client_side_output_generation", "false"}, {"return_md", "false"}});
  EXPECT_FALSE(off.returns.md);
  EXPECT_FALSE(off.returns.middle_json);
}

TEST(MineruFormTest, ServerUrlOutputDirAndUnknownFields) {
  EXPECT_FALSE(ReadOk({{"server_url", "  \t"}}).mineru.server_url);
  EXPECT_EQ(ReadOk({{"server_url", "http://127.0.0.1:30000"}}).mineru.server_url,
            "http://127.0.0.1:30000");
  // output_dir is gone in MinerU 3.4 (the server picks the directory); model and api_key are
  // for the client's own VLM server.
  const Upload u = ReadOk({{"output_dir", "/etc"}, {"model", "m"}, {"api_key", "k"}});
  EXPECT_EQ(u.files.size(), 1u);
}

TEST(MineruFormTest, ParseOptionsKeyChangesOnlyWhenImageAnalysisIsSet) {
  jobs::ParseOptions options;
  EXPECT_EQ(options.Key(), "formula=1;table=1;start=-;end=-");
  options.image_analysis = false;
  EXPECT_EQ(options.Key(), "formula=1;table=1;start=-;end=-;image_analysis=0");
  options.image_analysis = true;
  EXPECT_EQ(options.Key(), "formula=1;table=1;start=-;end=-;image_analysis=1");
}

}  // namespace
}  // namespace mineru::service
