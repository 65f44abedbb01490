// SPDX-License-Identifier: Apache-2.0
// Compiled with the same target set as every kernel (see mineru_highway_sources): the dispatch
// state (Highway's supported-target mask) is shared by all of them.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "base/simd_targets.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>
#include <hwy/targets.h>

#include "base/simd_targets.h"

HWY_BEFORE_NAMESPACE();
namespace mineru::HWY_NAMESPACE {
int64_t CurrentTarget() { return HWY_TARGET; }
}  // namespace mineru::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mineru {

HWY_EXPORT(CurrentTarget);

std::vector<int64_t> SimdTargets() { return hwy::SupportedAndGeneratedTargets(); }

std::string SimdTargetName(int64_t target) { return hwy::TargetName(target); }

std::string CurrentSimdTargetName() {
  return hwy::TargetName(HWY_DYNAMIC_DISPATCH(CurrentTarget)());
}

void ForceSimdTarget(int64_t target) { hwy::SetSupportedTargetsForTest(target); }

}  // namespace mineru
#endif  // HWY_ONCE
