// SPDX-License-Identifier: Apache-2.0
#include "model/matrix_factory.h"

#include <fmt/format.h>

#include "base/mapped_file.h"

namespace mineru::model {

std::string DecoderMatrixName(int layer, std::string_view role) {
  return layer < 0 ? fmt::format("decoder.{}", role) : fmt::format("decoder.{}.{}", layer, role);
}

std::string VisionMatrixName(int block, std::string_view role) {
  return block < 0 ? fmt::format("vision.{}", role) : fmt::format("vision.{}.{}", block, role);
}

Result<ops::PackedMatrix> MatrixFactory::Make(const std::string& name,
                                              std::span<const ops::MatrixView> parts,
                                              bool keep_pages) const {
  auto drop_pages = [&] {
    if (keep_pages) return;
    for (const ops::MatrixView& m : parts) {
      DropMappedPages(m.data, static_cast<size_t>(m.rows * m.cols) * DTypeSize(m.dtype));
    }
  };
  int64_t rows = 0;
  for (const ops::MatrixView& m : parts) rows += m.rows;
  if (options_.weights == WeightFormat::kInt8) {
    if (file_ != nullptr) return file_->View(name, rows, parts[0].cols, DType::kI8);
    ops::PackedMatrix q8 = ops::PackedMatrix::Q8(ops::Q8Matrix::Quantize(pool_, parts));
    drop_pages();
    return q8;
  }
  if (options_.precision == Precision::kBf16) return ops::PackedMatrix::Bf16Rows(parts);
  if (file_ != nullptr) {
    // The panels Pack would write for these parts.
    MINERU_ASSIGN_OR_RETURN(
        ops::PackedMatrix view,
        file_->View(name, rows, parts[0].cols, ops::PackedMatrix::PanelDType(parts[0].dtype)));
    // As after packing: the fp32 path never reads these rows again, so pages a caller faulted
    // in (or readahead did) need not stay resident.
    drop_pages();
    return view;
  }
  ops::PackedMatrix packed = ops::PackedMatrix::Pack(pool_, parts);
  drop_pages();
  return packed;
}

}  // namespace mineru::model
