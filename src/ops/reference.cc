// SPDX-License-Identifier: Apache-2.0
#include "ops/reference.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "ops/packed_matrix.h"
#include "ops/q8_matrix.h"

namespace mineru::ops::reference {

float LoadElement(const MatrixView& w, int64_t r, int64_t c) {
  const uint8_t* row = w.Row(r);
  switch (w.dtype) {
    case DType::kBF16: {
      uint16_t bits;
      std::memcpy(&bits, row + 2 * c, 2);
      return Bf16ToF32(bits);
    }
    case DType::kF16: {
      uint16_t bits;
      std::memcpy(&bits, row + 2 * c, 2);
      return F16ToF32(bits);
    }
    default: {
      float value;
      std::memcpy(&value, row + 4 * c, 4);
      return value;
    }
  }
}

void MatMul(const float* x, int64_t m, int64_t ldx, const MatrixView& w, const float* bias,
            float* y, int64_t ldy, bool accumulate) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < w.rows; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < w.cols; ++k) sum += double{x[i * ldx + k]} * LoadElement(w, j, k);
      if (bias != nullptr) sum += bias[j];
      if (accumulate) sum += y[i * ldy + j];
      y[i * ldy + j] = static_cast<float>(sum);
    }
  }
}

void MatMulBlocked(const float* x, int64_t m, int64_t ldx, const MatrixView& w, const float* bias,
                   float* y, int64_t ldy, bool accumulate) {
  std::vector<float> row(static_cast<size_t>(w.cols));
  for (int64_t j = 0; j < w.rows; ++j) {
    for (int64_t k = 0; k < w.cols; ++k) row[k] = LoadElement(w, j, k);  // exact widening
    for (int64_t i = 0; i < m; ++i) {
      float& out = y[i * ldy + j];
      // K = 0 is one empty block, so the bias is still added.
      for (int64_t k0 = 0; k0 < std::max<int64_t>(w.cols, 1); k0 += kPackedDepthBlock) {
        float acc = 0.0f;
        for (int64_t k = k0; k < std::min(w.cols, k0 + kPackedDepthBlock); ++k) {
          acc = std::fma(x[i * ldx + k], row[k], acc);
        }
        if (k0 == 0) {
          const float value = acc + (bias != nullptr ? bias[j] : 0.0f);
          out = accumulate ? out + value : value;
        } else {
          out = out + acc;
        }
      }
    }
  }
}

namespace {
// vdpbf16ps's denormal handling (DAZ on inputs, FTZ on results).
float FlushDenormal(float v) { return std::fabs(v) < FLT_MIN ? std::copysign(0.0f, v) : v; }
}  // namespace

float Bf16Dot(const uint16_t* a, const uint16_t* w, int64_t k, int64_t kp) {
  float acc[16] = {};
  auto product = [&](int64_t i) {
    if (i >= k) return 0.0f;  // both operands are zero padding past the row
    return FlushDenormal(Bf16ToF32(a[i])) * FlushDenormal(Bf16ToF32(w[i]));  // exact
  };
  for (int64_t c = 0; c < kp; c += 32) {
    for (int l = 0; l < 16; ++l) {
      acc[l] = FlushDenormal(acc[l] + product(c + 2 * l + 1));
      acc[l] = FlushDenormal(acc[l] + product(c + 2 * l));
    }
  }
  float h[8], q[4];
  for (int l = 0; l < 8; ++l) h[l] = acc[l] + acc[l + 8];
  for (int l = 0; l < 4; ++l) q[l] = h[l] + h[l + 4];
  return (q[0] + q[2]) + (q[1] + q[3]);
}

void MatMulBf16(const float* x, int64_t m, int64_t ldx, const MatrixView& w, const float* bias,
                float* y, int64_t ldy, bool accumulate) {
  const int64_t kp = (w.cols + 31) / 32 * 32;
  std::vector<uint16_t> a(static_cast<size_t>(kp)), row(static_cast<size_t>(w.cols));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(a.begin(), a.end(), uint16_t{0});
    for (int64_t c = 0; c < w.cols; ++c) a[c] = F32ToBf16(x[i * ldx + c]);
    for (int64_t j = 0; j < w.rows; ++j) {
      for (int64_t c = 0; c < w.cols; ++c) row[c] = F32ToBf16(LoadElement(w, j, c));
      const float value =
          Bf16Dot(a.data(), row.data(), w.cols, kp) + (bias != nullptr ? bias[j] : 0.0f);
      float& out = y[i * ldy + j];
      out = accumulate ? out + value : value;
    }
  }
}

namespace {
// One group of the Q8 quantization (ops/q8_matrix.h): scale = max |v| / 127, then
// q = clamp(rne(v / scale), -127, 127), all zero when the scale is zero.
float QuantizeQ8Group(const std::vector<float>& v, std::vector<int32_t>& q) {
  float amax = 0.0f;
  for (float value : v) amax = std::max(amax, std::fabs(value));
  const float scale = amax / 127.0f;
  for (size_t t = 0; t < v.size(); ++t) {
    float r = scale == 0.0f ? 0.0f : std::nearbyint(v[t] / scale);
    if (!(r >= -127.0f)) r = -127.0f;
    if (r > 127.0f) r = 127.0f;
    q[t] = static_cast<int32_t>(r);
  }
  return scale;
}

// Quantizes `rows` rows of `cols` values, value(r, c) giving each: q[r][k] over the padded depth
// and scale[r][g].
template <class Value>
void QuantizeQ8Rows(int64_t rows, int64_t cols, const Value& value, std::vector<int32_t>& q,
                    std::vector<float>& scale) {
  const int64_t groups = (cols + kQ8Group - 1) / kQ8Group;
  q.assign(static_cast<size_t>(rows * groups * kQ8Group), 0);
  scale.assign(static_cast<size_t>(rows * groups), 0.0f);
  std::vector<float> v(static_cast<size_t>(kQ8Group));
  std::vector<int32_t> group_q(v.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t g = 0; g < groups; ++g) {
      for (int64_t t = 0; t < kQ8Group; ++t) {
        const int64_t k = g * kQ8Group + t;
        v[t] = k < cols ? value(r, k) : 0.0f;  // the last group is padded with zeros
      }
      scale[r * groups + g] = QuantizeQ8Group(v, group_q);
      for (int64_t t = 0; t < kQ8Group; ++t) {
        q[(r * groups + g) * kQ8Group + t] = group_q[t];
      }
    }
  }
}

}  // namespace

void MatMulQ8(const float* x, int64_t m, int64_t ldx, const MatrixView& w, const float* bias,
              float* y, int64_t ldy, bool accumulate) {
  const int64_t groups = (w.cols + kQ8Group - 1) / kQ8Group;
  std::vector<int32_t> qw, qx;
  std::vector<float> dw, sx;
  QuantizeQ8Rows(
      w.rows, w.cols, [&](int64_t r, int64_t c) { return LoadElement(w, r, c); }, qw, dw);
  QuantizeQ8Rows(
      m, w.cols, [&](int64_t r, int64_t c) { return x[r * ldx + c]; }, qx, sx);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < w.rows; ++j) {
      float acc = 0.0f;
      for (int64_t g = 0; g < groups; ++g) {
        int32_t dot = 0;
        for (int64_t t = 0; t < kQ8Group; ++t) {
          dot += qw[(j * groups + g) * kQ8Group + t] * qx[(i * groups + g) * kQ8Group + t];
        }
        acc = std::fma(static_cast<float>(dot), dw[j * groups + g] * sx[i * groups + g], acc);
      }
      const float b = bias != nullptr ? bias[j] : 0.0f;
      float& out = y[i * ldy + j];
      out = accumulate ? out + (acc + b) : acc + b;
    }
  }
}

void RmsNorm(const float* x, int64_t rows, int64_t dim, int64_t ldx, const float* weight, float eps,
             float* y, int64_t ldy) {
  for (int64_t r = 0; r < rows; ++r) {
    double sum_sq = 0;
    for (int64_t c = 0; c < dim; ++c) sum_sq += double{x[r * ldx + c]} * x[r * ldx + c];
    const double inv = 1.0 / std::sqrt(sum_sq / dim + eps);
    for (int64_t c = 0; c < dim; ++c) {
      y[r * ldy + c] = static_cast<float>(weight[c] * (x[r * ldx + c] * inv));
    }
  }
}

void LayerNorm(const float* x, int64_t rows, int64_t dim, int64_t ldx, const float* weight,
               const float* bias, float eps, float* y, int64_t ldy) {
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0;
    for (int64_t c = 0; c < dim; ++c) mean += x[r * ldx + c];
    mean /= dim;
    double var = 0;
    for (int64_t c = 0; c < dim; ++c) var += (x[r * ldx + c] - mean) * (x[r * ldx + c] - mean);
    var /= dim;
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t c = 0; c < dim; ++c) {
      y[r * ldy + c] = static_cast<float>((x[r * ldx + c] - mean) * inv * weight[c] + bias[c]);
    }
  }
}

void QuickGelu(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(x[i] / (1.0 + std::exp(-1.702 * x[i])));
}

void GeluErf(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(0.5 * x[i] * (1.0 + std::erf(x[i] / std::sqrt(2.0))));
  }
}

void SiluMul(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    gate[i] = static_cast<float>(gate[i] / (1.0 + std::exp(-double{gate[i]})) * up[i]);
  }
}

void SiluMulRows(float* x, int64_t rows, int64_t n, int64_t ldx) {
  for (int64_t r = 0; r < rows; ++r) SiluMul(x + r * ldx, x + r * ldx + n, n);
}

void PackKv(const AttentionShape& shape, const float* k, int64_t ldk, const float* v, int64_t ldv,
            int64_t n, const MutableKvChunk& chunk, int64_t at) {
  const int64_t d = shape.head_dim, dp = shape.padded_head_dim(), cap = chunk.capacity;
  for (int64_t h = 0; h < shape.n_kv_heads; ++h) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t c = 0; c < dp; ++c) {
        if (c < d) chunk.k[(h * d + c) * cap + at + j] = k[j * ldk + h * d + c];
        chunk.v[(h * cap + at + j) * dp + c] = c < d ? v[j * ldv + h * d + c] : 0.0f;
      }
    }
  }
}

void RopeRotateHalf(float* x, int64_t rows, int64_t ldx, int heads, int head_dim, const float* cos,
                    const float* sin) {
  const int half = head_dim / 2;
  for (int64_t r = 0; r < rows; ++r) {
    for (int h = 0; h < heads; ++h) {
      float* v = x + r * ldx + int64_t{h} * head_dim;
      for (int j = 0; j < half; ++j) {
        const double c = cos[r * half + j], s = sin[r * half + j];
        const double a = v[j], b = v[j + half];
        v[j] = static_cast<float>(a * c - b * s);
        v[j + half] = static_cast<float>(b * c + a * s);
      }
    }
  }
}

void Softmax(float* x, int64_t rows, int64_t n, int64_t ld) {
  for (int64_t r = 0; r < rows; ++r) {
    float* row = x + r * ld;
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < n; ++i) max = std::max(max, double{row[i]});
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += std::exp(row[i] - max);
    for (int64_t i = 0; i < n; ++i) row[i] = static_cast<float>(std::exp(row[i] - max) / sum);
  }
}

void GatherRows(const MatrixView& table, const int32_t* ids, int64_t n, float* y, int64_t ldy) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < table.cols; ++c) y[i * ldy + c] = LoadElement(table, ids[i], c);
  }
}

void Attention(const AttentionShape& shape, const float* q, int64_t ldq, int64_t n_q,
               int64_t q_start, const float* k, int64_t ldk, const float* v, int64_t ldv,
               int64_t n_kv, float* out, int64_t ldo) {
  const int d = shape.head_dim;
  const int group = shape.n_heads / shape.n_kv_heads;
  std::vector<double> scores(static_cast<size_t>(n_kv));
  for (int64_t i = 0; i < n_q; ++i) {
    for (int h = 0; h < shape.n_heads; ++h) {
      const int g = h / group;
      const float* qi = q + i * ldq + int64_t{h} * d;
      const int64_t visible = shape.causal ? std::min(n_kv, q_start + i + 1) : n_kv;
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < visible; ++j) {
        const float* kj = k + j * ldk + int64_t{g} * d;
        double dot = 0;
        for (int c = 0; c < d; ++c) dot += double{qi[c]} * kj[c];
        scores[j] = dot * shape.scale;
        max = std::max(max, scores[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < visible; ++j) {
        scores[j] = std::exp(scores[j] - max);
        sum += scores[j];
      }
      float* o = out + i * ldo + int64_t{h} * d;
      for (int c = 0; c < d; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < visible; ++j) acc += scores[j] * v[j * ldv + int64_t{g} * d + c];
        o[c] = visible > 0 ? static_cast<float>(acc / sum) : 0.0f;
      }
    }
  }
}

void AttentionBf16(const AttentionShape& shape, const Bf16AttentionProblem& problem) {
  const int64_t d = shape.head_dim, dp = shape.padded_head_dim(), pairs = (d + 1) / 2;
  const int64_t group = shape.n_heads / shape.n_kv_heads;
  // Key j of the problem: its chunk and slot.
  std::vector<std::pair<const Bf16KvChunk*, int64_t>> slots;
  for (const Bf16KvChunk& chunk : problem.kv) {
    for (int64_t j = 0; j < chunk.n; ++j) slots.emplace_back(&chunk, j);
  }
  const auto n_kv = static_cast<int64_t>(slots.size());
  auto half = [](uint32_t word, int64_t which) {
    return Bf16ToF32(static_cast<uint16_t>(which == 0 ? word & 0xFFFFu : word >> 16));
  };
  auto key = [&](int64_t g, int64_t j, int64_t c) {
    const auto& [chunk, slot] = slots[static_cast<size_t>(j)];
    return half(chunk->k[(g * pairs + c / 2) * chunk->capacity + slot], c % 2);
  };
  auto value = [&](int64_t g, int64_t j, int64_t c) {
    const auto& [chunk, slot] = slots[static_cast<size_t>(j)];
    return half(chunk->v[(g * (chunk->capacity / 2) + slot / 2) * dp + c], slot % 2);
  };
  std::vector<double> q(static_cast<size_t>(d)), p(static_cast<size_t>(std::max<int64_t>(n_kv, 1)));
  for (int64_t i = 0; i < problem.n_q; ++i) {
    for (int64_t h = 0; h < shape.n_heads; ++h) {
      const int64_t g = h / group;
      const float* src = problem.q + i * problem.ldq + h * d;
      for (int64_t c = 0; c < d; ++c) q[c] = Bf16ToF32(F32ToBf16(src[c] * shape.scale));
      const int64_t last = std::min(n_kv - 1, shape.causal ? problem.q_start + i : n_kv - 1);
      float* dst = problem.out + i * problem.ldo + h * d;
      if (last < 0) {
        std::fill(dst, dst + d, 0.0f);
        continue;
      }
      double max = -INFINITY;
      for (int64_t j = 0; j <= last; ++j) {
        double score = 0;
        for (int64_t c = 0; c < d; ++c) score += q[c] * key(g, j, c);
        p[j] = score;
        max = std::max(max, score);
      }
      double sum = 0;
      for (int64_t j = 0; j <= last; ++j) sum += (p[j] = std::exp(p[j] - max));
      for (int64_t c = 0; c < d; ++c) {
        double acc = 0;
        for (int64_t j = 0; j <= last; ++j) acc += p[j] * value(g, j, c);
        dst[c] = static_cast<float>(acc / sum);
      }
    }
  }
}

}  // namespace mineru::ops::reference
