// SPDX-License-Identifier: Apache-2.0
#include "pipeline/document.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <span>
#include <thread>

#include "base/blocking_queue.h"
#include "base/json.h"
#include "base/mapped_file.h"
#include "base/md5.h"
#include "base/sha256.h"
#include "image/decode.h"
#include "image/encode.h"
#include "image/image_budget.h"
#include "image/pdf/image_layout_pdf.h"
#include "image/pdf/pdf_document.h"
#include "image/phash.h"
#include "image/probe.h"
#include "image/resize.h"
#include "image/transform.h"
#include "pipeline/content_list.h"
#include "pipeline/content_list_pro.h"
#include "pipeline/content_list_v2.h"
#include "pipeline/document_pro.h"
#include "pipeline/inline_table_images.h"
#include "pipeline/layout_pdf.h"
#include "pipeline/magic_model.h"
#include "pipeline/magic_model_pro.h"
#include "pipeline/markdown.h"
#include "pipeline/markdown_pro.h"
#include "pipeline/table_merge.h"

namespace mineru::pipeline {
namespace {

namespace fs = std::filesystem;

// One page ready for extraction: the full-resolution image and its size in PDF points.
struct PageJob {
  int page_idx = 0;
  image::RgbImage image;
  double width_pt = 0, height_pt = 0;
  double scale = 0;  // pixels per point
};

// What a page leaves behind once its image is gone.
struct PageOutput {
  ExtractTimings timings;
  double assemble_seconds = 0;
  Json middle;  // PageInfo (docs/MINERU.md 3.2)
  Json model;   // the client's blocks (MINERU.md 3.5); Pro: written after the cross-page table step
  std::vector<ContentBlock> client_blocks;  // Pro: kept for the cross-page table step
  std::optional<std::string> error;
  std::vector<std::string> warnings;
  int64_t failed_blocks = 0, requests = 0, cached_requests = 0, generated_tokens = 0;
  int64_t request_retries = 0;
  std::vector<TruncatedRequest> truncated;
  uint64_t phash = 0;  // of the rendered page; 0 when it could not be rendered
};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Json EmptyPage(int page_idx, int width_pt, int height_pt, Profile profile) {
  Json page{{"para_blocks", Json::array()},
            {"discarded_blocks", Json::array()},
            {"page_size", {width_pt, height_pt}},
            {"page_idx", page_idx}};
  if (profile == Profile::kPro) page["preproc_blocks"] = Json::array();
  return page;
}

// Inline table images are written only as the raster types MinerU's crops use.
bool IsRasterImageName(std::string_view name) {
  for (std::string_view ext : {".jpg", ".png", ".gif", ".bmp", ".webp"}) {
    if (name.ends_with(ext)) return true;
  }
  return false;
}

// Extracts one page and writes its crops: the image of every image, table and equation span,
// cut from the rendered page at bbox * scale and named as MinerU names it (docs/MINERU.md 3.6).
PageOutput RunPage(Generator& generator, const PageJob& job, const fs::path& images_dir,
                   const DocumentOptions& options) {
  PageOutput out;
  out.phash = image::PerceptualHash(job.image);
  const int width_pt = static_cast<int>(job.width_pt), height_pt = static_cast<int>(job.height_pt);
  ExtractOptions extract = options.extract;
  if (options.cancel) extract.cancel = options.cancel;
  const Profile profile = extract.profile;
  auto extraction = ExtractPage(generator, job.image, extract);
  if (!extraction) {
    out.error = extraction.error().ToString();
    out.middle = EmptyPage(job.page_idx, width_pt, height_pt, profile);
    out.model = Json::array();
    return out;
  }
  const auto assemble_start = std::chrono::steady_clock::now();
  out.timings = extraction->timings;
  out.requests = extraction->requests;
  out.cached_requests = extraction->cached_requests;
  out.failed_blocks = extraction->failed_blocks;
  out.generated_tokens = extraction->generated_tokens;
  out.request_retries = extraction->request_retries;
  out.truncated = std::move(extraction->truncated);
  for (TruncatedRequest& t : out.truncated) t.page_idx = job.page_idx;
  out.warnings = std::move(extraction->warnings);
  std::string page_md5;  // of the page's pixels, computed for the first crop only
  ImagePathFn save = [&](std::string_view span_type, const std::array<int, 4>& bbox) {
    const auto x0 = static_cast<int64_t>(bbox[0] * job.scale);
    const auto y0 = static_cast<int64_t>(bbox[1] * job.scale);
    const auto x1 = static_cast<int64_t>(bbox[2] * job.scale);
    const auto y1 = static_cast<int64_t>(bbox[3] * job.scale);
    if (x1 <= x0 || y1 <= y0) return std::string();
    if (page_md5.empty()) page_md5 = Md5Hex(job.image.pixels);
    const std::string key = fmt::format("{}/{}_{}_{}_{}_{}_{}", span_type, page_md5, job.page_idx,
                                        bbox[0], bbox[1], bbox[2], bbox[3]);
    const std::string name = HexString(Sha256Of(key)) + ".jpg";
    auto crop = image::Crop(job.image, x0, y0, x1, y1);
    if (!crop) {
      out.warnings.push_back(fmt::format("{} crop: {}", span_type, crop.error().ToString()));
      return std::string();
    }
    auto jpeg = image::EncodeJpeg(*crop);
    if (!jpeg) {
      out.warnings.push_back(fmt::format("{} crop: {}", span_type, jpeg.error().ToString()));
      return std::string();
    }
    if (Status written = WriteFileAtomically((images_dir / name).string(), *jpeg); !written) {
      out.warnings.push_back(fmt::format("{} crop: {}", span_type, written.error().ToString()));
      return std::string();
    }
    return name;
  };
  if (profile == Profile::kPro) {
    // Inline table images (data URIs in the HTML) as MinerU 3.4.4 writes them:
    // images/<sha256 of the whole URI>.<ext>.
    InlineImageFn save_inline = [&](std::string_view uri) {
      auto image = DecodeInlineTableImage(uri, kMaxInlineTableImageBytes);
      if (!image) {
        out.warnings.push_back(fmt::format("inline table image: {}", image.error().ToString()));
        return std::string();
      }
      if (!IsRasterImageName(image->file_name)) {
        // MinerU would write any image type; an SVG from a model's answer, served back by the
        // service, could carry script: only raster images are written.
        out.warnings.push_back(
            fmt::format("inline table image {} not written: not a raster image", image->file_name));
        return std::string();
      }
      if (Status written =
              WriteFileAtomically((images_dir / image->file_name).string(), image->bytes);
          !written) {
        out.warnings.push_back(fmt::format("inline table image: {}", written.error().ToString()));
        return std::string();
      }
      return image->file_name;
    };
    out.middle = MiddlePagePro(extraction->blocks, job.page_idx, width_pt, height_pt, save,
                               save_inline, &out.warnings);
    out.client_blocks = std::move(extraction->blocks);
  } else {
    out.middle =
        MiddlePage(extraction->blocks, job.page_idx, width_pt, height_pt, save, &out.warnings);
    out.model = ModelJsonPage(extraction->blocks);
  }
  out.assemble_seconds = SecondsSince(assemble_start);
  return out;
}

Status WriteText(const fs::path& path, const std::string& text) {
  return WriteFileAtomically(path.string(),
                             std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

// MinerU writes its JSON with indent 4 and ensure_ascii=False. Text from the model is valid
// UTF-8 (the tokenizer's decoding replaces broken sequences), but a bad byte must never abort a
// document: any is written as U+FFFD.
std::string Dump(const Json& json) {
  return json.dump(4, ' ', false, Json::error_handler_t::replace);
}

// An image input, read under options.image_budget: the header is probed before any decoding,
// the request limit applies to its decoded bytes, and the file, pixels and scratch wait for room
// in the process budget (cancellable); `memory` keeps the pixels counted.
Result<image::RgbImage> ReadImageDocument(const std::string& path, const DocumentOptions& options,
                                          ByteReservation* memory) {
  const image::DecodeLimits& limits = options.image_decode.limits;
  MINERU_ASSIGN_OR_RETURN(
      std::string file,
      ReadFileToString(path, static_cast<size_t>(std::min<uint64_t>(limits.max_bytes, SIZE_MAX))));
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(file.data()), file.size());
  if (image::SniffFormat(bytes) == image::ImageFormat::kUnknown) {
    // Bytes of no image format: nothing can be decoded, and DecodeImageFile's error is the one
    // that names the file and what it is not.
    auto refused = image::DecodeImageFile(path, options.image_decode);
    if (!refused) return tl::unexpected(std::move(refused).error());
  }
  auto header = image::ProbeImage(bytes, limits);
  if (!header) return tl::unexpected(WithContext(std::move(header).error(), path));
  if (Status within = image::CheckRequestDecodedBytes(header->decoded_bytes(), options.image_budget,
                                                      "the image");
      !within) {
    return tl::unexpected(WithContext(std::move(within).error(), path));
  }
  MINERU_ASSIGN_OR_RETURN(
      *memory, image::HoldInFlight(options.image_budget,
                                   bytes.size() + header->decoded_bytes() + header->scratch_bytes,
                                   options.cancel.get()));
  image::DecodeOptions decode = options.image_decode;
  decode.limits = image::LimitsWithin(*header, limits);
  auto decoded = image::DecodeImage(bytes, decode);
  if (!decoded) return tl::unexpected(WithContext(std::move(decoded).error(), path));
  memory->ShrinkTo(decoded->image.pixels.size());  // the file and the scratch are gone
  return std::move(decoded->image);
}

enum class SourceKind { kPdf, kImage, kUnknown };

// What a file holds, by its bytes (as MinerU, which judges content, not names): a PDF when
// "%PDF-" is in the first 1024 bytes (PDF readers accept the header anywhere there), an image
// when they start with one of the image signatures, else unknown.
SourceKind SniffSource(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::string head(1024, '\0');
  file.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(file.gcount()));
  if (head.find("%PDF-") != std::string::npos) return SourceKind::kPdf;
  const auto* bytes = reinterpret_cast<const uint8_t*>(head.data());
  return image::SniffFormat(std::span(bytes, head.size())) != image::ImageFormat::kUnknown
             ? SourceKind::kImage
             : SourceKind::kUnknown;
}

// The extension of `path` in lower case, with its dot (".pdf"), or "".
std::string LowerExtension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

bool IsImageExtension(const std::string& ext) {
  for (const char* e : {".png", ".jpg", ".jpeg", ".jpe", ".jfif", ".webp", ".tif", ".tiff", ".bmp",
                        ".dib", ".gif"}) {
    if (ext == e) return true;
  }
  return false;
}

}  // namespace

Result<DocumentResult> ParseDocument(Generator& generator, const std::string& input_path,
                                     const std::string& output_root, const DocumentOptions& options,
                                     const ProgressFn& progress, ThreadPool* pool) {
  const auto start = std::chrono::steady_clock::now();
  std::error_code ec;
  if (!fs::is_regular_file(input_path, ec)) {
    return Fail(ErrorCode::kNotFound, "{}: not a readable file", input_path);
  }
  if (options.pages_in_flight < 1) {
    return Fail(ErrorCode::kInvalidArgument, "pages_in_flight must be at least 1, not {}",
                options.pages_in_flight);
  }
  const std::string stem = fs::path(input_path).stem().string();
  const fs::path out_dir = fs::path(output_root) / stem / "vlm";
  const fs::path images_dir = out_dir / "images";
  fs::create_directories(images_dir, ec);
  if (ec) return Fail(ErrorCode::kIo, "{}: cannot create: {}", images_dir.string(), ec.message());

  // The page source: a PDF through the render helper, or an image as MinerU sees it (wrapped in
  // a one-page PDF of its pixel size in points and rendered at 200 DPI: here resized with
  // bicubic to the size that render would have, since no PDF round trip is needed).
  std::unique_ptr<pdf::PdfDocument> pdf;
  std::optional<image::RgbImage> single;
  ByteReservation single_memory;  // of options.image_budget.in_flight, for `single`
  int page_count = 1;
  // Bytes that are neither are named in the words of the type the name promises: a ".pdf" goes
  // to the PDF reader ("empty file, not a PDF", "not a PDF (no %PDF- header ...)"), an image
  // name to the image decoder ("not a PNG file"), anything else is named here.
  const SourceKind kind = SniffSource(input_path);
  const std::string ext = LowerExtension(input_path);
  const bool is_pdf = kind == SourceKind::kPdf || (kind == SourceKind::kUnknown && ext == ".pdf");
  if (kind == SourceKind::kUnknown && !is_pdf && !IsImageExtension(ext)) {
    return Fail(ErrorCode::kUnsupported,
                "{}: not a PDF, PNG, JPEG, WebP, TIFF, BMP or GIF file (unknown magic bytes)",
                input_path);
  }
  if (is_pdf) {
    MINERU_ASSIGN_OR_RETURN(pdf, pdf::PdfDocument::Open(input_path, options.render));
    page_count = pdf->info().page_count();
  } else {
    MINERU_ASSIGN_OR_RETURN(single, ReadImageDocument(input_path, options, &single_memory));
  }
  const int first = std::max(0, options.start_page.value_or(0));
  const int last = std::min(page_count - 1, options.end_page.value_or(page_count - 1));
  if (first > last) {
    return Fail(ErrorCode::kInvalidArgument, "{}: page range {}..{} is empty ({} pages)",
                input_path, first, last, page_count);
  }
  if (is_pdf) {
    auto bytes = ReadFileToString(input_path, options.render.limits.max_document_bytes);
    if (bytes) {
      MINERU_RETURN_IF_ERROR(WriteText(out_dir / (stem + "_origin.pdf"), *bytes));
    }
  }

  DocumentResult result;
  result.output_dir = out_dir.string();
  result.pages = last - first + 1;
  std::vector<PageOutput> pages(static_cast<size_t>(result.pages));
  std::mutex progress_mutex;
  DocumentProgress state{0, result.pages, 0};
  // One rendered page waits at most: page images in memory stay within pages_in_flight + 2
  // (those being extracted, the one waiting, the one being rendered).
  BlockingQueue<PageJob> queue(1);
  std::vector<std::thread> workers;
  for (int w = 0; w < std::min(options.pages_in_flight, result.pages); ++w) {
    workers.emplace_back([&] {
      while (std::optional<PageJob> job = queue.Pop()) {
        const auto page_start = std::chrono::steady_clock::now();
        PageOutput out = RunPage(generator, *job, images_dir, options);
        std::lock_guard lock(progress_mutex);
        state.last_page_seconds = SecondsSince(page_start);
        ++state.pages_done;
        state.generated_tokens += out.generated_tokens;
        state.blocks_done += out.requests;
        pages[static_cast<size_t>(job->page_idx - first)] = std::move(out);
        if (progress) progress(state);
      }
    });
  }
  Status render_status = OkStatus();
  std::optional<image::RgbImage> layout_page;  // an image input's page, for the layout PDF
  double layout_page_width_pt = 0, layout_page_height_pt = 0;
  const auto cancelled = [&options] {
    return options.cancel && options.cancel->load(std::memory_order_relaxed);
  };
  for (int i = first; i <= last && !cancelled(); ++i) {
    PageJob job;
    job.page_idx = i;
    const auto render_start = std::chrono::steady_clock::now();
    if (pdf) {
      auto page = pdf->RenderPage(i);
      if (!page) {
        // The page is lost, not the document (unless the helper itself died: then every later
        // page reports the same error).
        PageOutput failed;
        failed.error = page.error().ToString();
        const pdf::PageInfo& info = pdf->info().pages[static_cast<size_t>(i)];
        failed.middle = EmptyPage(i, static_cast<int>(info.width_pt),
                                  static_cast<int>(info.height_pt), options.extract.profile);
        failed.model = Json::array();
        std::lock_guard lock(progress_mutex);
        state.last_page_seconds = SecondsSince(render_start);
        ++state.pages_done;
        pages[static_cast<size_t>(i - first)] = std::move(failed);
        if (progress) progress(state);
        continue;
      }
      job.image = std::move(page->image);
      job.width_pt = page->info.width_pt;
      job.height_pt = page->info.height_pt;
      job.scale = page->scale();
    } else {
      const pdf::PageInfo info{static_cast<double>(single->width),
                               static_cast<double>(single->height), 0};
      auto geometry =
          pdf::ComputePageGeometry(info, options.render.dpi, options.render.max_long_side,
                                   options.render.limits.max_page_pixels);
      if (!geometry) {
        render_status = tl::unexpected(geometry.error());
        break;
      }
      auto resized = image::ResizeBicubic(*single, geometry->width, geometry->height, pool);
      if (!resized) {
        render_status = tl::unexpected(resized.error());
        break;
      }
      job.image = std::move(*resized);
      single.reset();
      single_memory.Release();
      // Kept for <stem>_layout.pdf, drawn once every page is done (one page: one image).
      layout_page = job.image;
      layout_page_width_pt = info.width_pt;
      layout_page_height_pt = info.height_pt;
      job.width_pt = info.width_pt;
      job.height_pt = info.height_pt;
      job.scale = geometry->scale;
    }
    result.render_seconds += SecondsSince(render_start);
    queue.Push(std::move(job));
  }
  queue.Close();
  for (std::thread& t : workers) t.join();
  if (cancelled()) return Fail(ErrorCode::kCancelled, "{}: parse cancelled", input_path);
  MINERU_RETURN_IF_ERROR(render_status);

  const Profile profile = options.extract.profile;
  Json pdf_info = Json::array();
  Json model = Json::array();
  std::vector<std::vector<ContentBlock>> client_pages;
  for (PageOutput& page : pages) {
    const int page_idx = page.middle.value("page_idx", 0);
    if (page.error) result.failed_pages.push_back({page_idx, *page.error});
    for (const std::string& w : page.warnings) {
      result.warnings.push_back(fmt::format("page {}: {}", page_idx + 1, w));
    }
    result.failed_blocks += page.failed_blocks;
    result.requests += page.requests;
    result.cached_requests += page.cached_requests;
    result.page_hashes.push_back(page.phash);
    result.generated_tokens += page.generated_tokens;
    result.request_retries += page.request_retries;
    for (TruncatedRequest& t : page.truncated) result.truncated.push_back(std::move(t));
    result.extract += page.timings;
    result.assemble_seconds += page.assemble_seconds;
    pdf_info.push_back(std::move(page.middle));
    if (profile == Profile::kPro) {
      client_pages.push_back(std::move(page.client_blocks));
    } else {
      model.push_back(std::move(page.model));
    }
  }
  const auto document_start = std::chrono::steady_clock::now();
  MarkdownOptions markdown_options;
  markdown_options.formula_enabled = options.extract.formula;
  markdown_options.table_enabled = options.extract.table;
  std::string markdown;
  Json content_list;
  if (profile == Profile::kPro) {
    if (options.model_table_merge && options.extract.table) {
      CrossPageTableOptions merge_options;
      merge_options.max_new_tokens = options.extract.max_new_tokens;
      merge_options.cache = options.extract.cache;
      merge_options.attempts = options.extract.block_attempts;
      merge_options.request_timeout = options.extract.request_timeout;
      merge_options.cancel = options.cancel ? options.cancel : options.extract.cancel;
      const CrossPageTableStats merge =
          DetectCrossPageTables(generator, client_pages, pdf_info, merge_options, &result.warnings);
      result.requests += merge.requests;
      result.request_retries += merge.request_retries;
      result.cached_requests += merge.cached_requests;
      result.generated_tokens += merge.generated_tokens;
      result.table_merge_requests = merge.candidates;
      result.table_merges = merge.merged;
      if (cancelled()) return Fail(ErrorCode::kCancelled, "{}: parse cancelled", input_path);
    }
    for (const std::vector<ContentBlock>& blocks : client_pages) {
      model.push_back(ModelJsonPage(blocks));
    }
    FinalizeMiddleJsonPro(pdf_info, options.table_merge && options.extract.table);
    markdown = MakeMarkdownPro(pdf_info, markdown_options);
    content_list = MakeContentListPro(pdf_info, markdown_options);
  } else {
    if (options.table_merge && options.extract.table) MergeCrossPageTables(pdf_info);
    markdown = MakeMarkdown(pdf_info, markdown_options);
    content_list = MakeContentList(pdf_info);
  }
  const Json content_list_v2 = MakeContentListV2(pdf_info, markdown_options);
  // _version_name: the MinerU release whose output format these files follow.
  const Json middle{{"pdf_info", pdf_info},
                    {"_backend", "vlm"},
                    {"_version_name", std::string(MineruOutputVersion(profile))}};
  MINERU_RETURN_IF_ERROR(WriteText(out_dir / (stem + ".md"), markdown));
  MINERU_RETURN_IF_ERROR(WriteText(out_dir / (stem + "_content_list.json"), Dump(content_list)));
  MINERU_RETURN_IF_ERROR(
      WriteText(out_dir / (stem + "_content_list_v2.json"), Dump(content_list_v2)));
  MINERU_RETURN_IF_ERROR(WriteText(out_dir / (stem + "_middle.json"), Dump(middle)));
  MINERU_RETURN_IF_ERROR(WriteText(out_dir / (stem + "_model.json"), Dump(model)));
  // The layout drawn over the pages (MinerU draw_layout_bbox). A failure here costs the
  // document only this file: a warning, not an error.
  {
    const std::string layout_path = (out_dir / (stem + "_layout.pdf")).string();
    const pdf::LayoutPlan layout_plan = BuildLayoutPlan(pdf_info, profile, first);
    Result<pdf::LayoutPdfReport> layout = Fail(ErrorCode::kInternal, "no page source");
    if (pdf) {
      layout = pdf->WriteLayoutPdf(layout_plan, layout_path);
    } else if (layout_page) {
      // MinerU's wrapper page: the image's size in points, as the render loop used.
      layout = pdf::WriteImageLayoutPdf(*layout_page, layout_page_width_pt, layout_page_height_pt,
                                        layout_plan, layout_path);
    }
    if (!layout) {
      result.warnings.push_back("layout PDF not written: " + layout.error().ToString());
    } else {
      for (const std::string& w : layout->warnings) result.warnings.push_back(w);
    }
  }
  // What went wrong, beside the outputs: failed pages and blocks never pass silently.
  Json report{{"profile", std::string(ProfileName(profile))},
              {"pages", result.pages},
              {"failed_pages", Json::array()},
              {"failed_blocks", result.failed_blocks},
              {"requests", result.requests},
              {"request_retries", result.request_retries},
              {"cached_requests", result.cached_requests},
              {"truncated_requests", Json::array()},
              {"page_phash", Json::array()},
              {"warnings", result.warnings}};
  if (profile == Profile::kPro) {
    report["table_merge_requests"] = result.table_merge_requests;
    report["table_merges"] = result.table_merges;
  }
  for (const TruncatedRequest& t : result.truncated) {
    report["truncated_requests"].push_back(
        {{"page_idx", t.page_idx}, {"block", t.block ? Json(*t.block) : Json()}, {"type", t.type}});
  }
  for (uint64_t h : result.page_hashes) report["page_phash"].push_back(fmt::format("{:016x}", h));
  for (const PageFailure& f : result.failed_pages) {
    report["failed_pages"].push_back({{"page_idx", f.page_idx}, {"error", f.error}});
  }
  MINERU_RETURN_IF_ERROR(WriteText(out_dir / (stem + "_report.json"), Dump(report)));
  result.assemble_seconds += SecondsSince(document_start);
  result.total_seconds = SecondsSince(start);
  return result;
}

}  // namespace mineru::pipeline
