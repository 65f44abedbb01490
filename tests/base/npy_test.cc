// SPDX-License-Identifier: Apache-2.0
#include "base/npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace mineru {
namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::path(testing::TempDir()) / name).string();
}

std::span<const uint8_t> AsBytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(NpyTest, RoundTripFloatAndInt) {
  const std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f};
  const std::vector<int64_t> shape = {2, 3};
  const std::string path = TempPath("values.npy");
  ASSERT_TRUE(WriteNpy(path, DType::kF32, shape, values.data()));
  auto array = ReadNpy(path);
  ASSERT_TRUE(array) << array.error().ToString();
  EXPECT_EQ(array->shape, shape);
  EXPECT_EQ(array->ToF32().value(), values);

  const std::vector<int64_t> ids = {151644, 8948, 198};
  const std::vector<int64_t> id_shape = {3};
  ASSERT_TRUE(WriteNpy(TempPath("ids.npy"), DType::kI64, id_shape, ids.data()));
  auto id_array = ReadNpy(TempPath("ids.npy"));
  ASSERT_TRUE(id_array);
  EXPECT_EQ(id_array->ShapeString(), "[3]");
  EXPECT_EQ(id_array->ToI64().value(), ids);
  EXPECT_FALSE(id_array->ToF32());  // an int array is not silently read as float
}

TEST(NpyTest, RejectsBadFiles) {
  EXPECT_EQ(ParseNpy(AsBytes("hello world"), "x").error().code, ErrorCode::kCorrupt);
  // Header length pointing past the end of the file.
  std::string header = std::string("\x93NUMPY\x01\x00", 8) + std::string("\xff\x7f", 2) + "{}";
  auto past_end = ParseNpy(AsBytes(header), "x");
  ASSERT_FALSE(past_end);
  EXPECT_NE(past_end.error().message.find("past the end"), std::string::npos);
  // Data shorter than the shape needs.
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(dict.size());
  file += '\0';
  file += dict + std::string(8, '\0');
  auto short_data = ParseNpy(AsBytes(file), "x");
  ASSERT_FALSE(short_data);
  EXPECT_NE(short_data.error().message.find("needs 16 data bytes"), std::string::npos);
  // Big-endian and Fortran order are refused, not misread.
  std::string be = file;
  be.replace(be.find("<f4"), 3, ">f4");
  EXPECT_EQ(ParseNpy(AsBytes(be), "x").error().code, ErrorCode::kUnsupported);
  std::string fortran = file;
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_EQ(ParseNpy(AsBytes(fortran), "x").error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(ReadNpy(TempPath("does-not-exist.npy")).error().code, ErrorCode::kNotFound);
}

TEST(NpyTest, SizeLimitBoundary) {
  const std::vector<float> values(16, 1.0f);
  const std::vector<int64_t> shape = {16};
  const std::string path = TempPath("limit.npy");
  ASSERT_TRUE(WriteNpy(path, DType::kF32, shape, values.data()));
  const auto size = std::filesystem::file_size(path);
  EXPECT_TRUE(ReadNpy(path, size));
  auto over = ReadNpy(path, size - 1);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, ErrorCode::kResourceExhausted);
}

}  // namespace
}  // namespace mineru
