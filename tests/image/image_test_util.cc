// SPDX-License-Identifier: Apache-2.0
#include "image_test_util.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>

extern char** environ;

namespace mineru::image::testing {
namespace {

namespace fs = std::filesystem;

// Runs the reference script into `dir`; an empty string on success, else what went wrong.
std::string RunScript(const std::string& dir) {
  const std::string script = std::string(MINERU_IMAGE_TEST_SOURCE_DIR) + "/pillow_reference.py";
  std::vector<std::string> args{MINERU_PILLOW_PYTHON, script, dir, kData};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int error = posix_spawn(&pid, args[0].c_str(), nullptr, nullptr, argv.data(), environ);
  if (error != 0) return "cannot start " + args[0] + ": " + std::strerror(error);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return args[0] + " " + script + " failed (is Debian's python3-pil installed?)";
  }
  return "";
}

}  // namespace

const std::string& ReferenceDir() {
  static const std::string dir = [] {
    const std::string d = MINERU_PILLOW_REFERENCE_DIR;
    if (!fs::exists(d + "/crops.json")) {
      const std::string error = RunScript(d);
      if (!error.empty()) ADD_FAILURE() << error;
    }
    return d;
  }();
  return dir;
}

std::span<const uint8_t> Reference::Bytes(const Json& pair) const {
  const auto offset = pair.at(0).get<uint64_t>(), size = pair.at(1).get<uint64_t>();
  if (offset + size > blob_.size()) {
    ADD_FAILURE() << "reference slice past the end of " << blob_.path();
    return {};
  }
  return blob_.bytes().subspan(offset, size);
}

const Reference& Reference::Get(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Reference>> loaded;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = loaded[name];
  if (!slot) {
    slot = std::make_unique<Reference>();
    const std::string base = ReferenceDir() + "/" + name;
    auto json = ReadJsonFile(base + ".json", size_t{1} << 30);
    if (!json) {
      ADD_FAILURE() << json.error().ToString();
      slot->manifest_ = Json{{"cases", Json::array()}};
    } else {
      slot->manifest_ = std::move(*json);
      if (slot->manifest_.value("pillow", "") != "9.4.0") {
        ADD_FAILURE() << "the reference was made with Pillow "
                      << slot->manifest_.value("pillow", "?")
                      << "; these tests pin Pillow 9.4.0 (Debian 12's python3-pil)";
      }
    }
    auto blob = MappedFile::Open(base + ".bin");
    if (blob) {
      slot->blob_ = std::move(*blob);
    } else {
      ADD_FAILURE() << blob.error().ToString();
    }
  }
  return *slot;
}

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteBytes(const std::string& path, std::span<const uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

RgbImage NoiseImage(int64_t width, int64_t height, uint32_t seed) {
  std::mt19937 rng(seed);
  RgbImage image;
  image.width = width;
  image.height = height;
  image.pixels.resize(static_cast<size_t>(width * height) * 3);
  for (uint8_t& v : image.pixels) v = static_cast<uint8_t>(rng() >> 24);
  return image;
}

std::string FirstDifference(const RgbImage& a, const RgbImage& b) {
  if (a.width != b.width || a.height != b.height) {
    return "size " + std::to_string(a.width) + "x" + std::to_string(a.height) + " vs " +
           std::to_string(b.width) + "x" + std::to_string(b.height);
  }
  for (size_t i = 0; i < a.pixels.size() && i < b.pixels.size(); ++i) {
    if (a.pixels[i] != b.pixels[i]) {
      const size_t px = i / 3;
      return "pixel (" + std::to_string(px % a.width) + ", " + std::to_string(px / a.width) +
             ") channel " + std::to_string(i % 3) + ": " + std::to_string(a.pixels[i]) + " vs " +
             std::to_string(b.pixels[i]);
    }
  }
  return "";
}

}  // namespace mineru::image::testing
