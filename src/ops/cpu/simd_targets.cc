// SPDX-License-Identifier: Apache-2.0
// Compiled with the same target set as the other kernels (see mineru_highway_sources).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/cpu/simd_targets.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>
#include <hwy/targets.h>

#include "ops/simd_targets.h"

HWY_BEFORE_NAMESPACE();
namespace mineru::ops::HWY_NAMESPACE {
int64_t CurrentTarget() { return HWY_TARGET; }
}  // namespace mineru::ops::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mineru::ops {

HWY_EXPORT(CurrentTarget);

std::vector<int64_t> KernelTargets() { return hwy::SupportedAndGeneratedTargets(); }

std::string KernelTargetName(int64_t target) { return hwy::TargetName(target); }

std::string SimdTargetName() { return hwy::TargetName(HWY_DYNAMIC_DISPATCH(CurrentTarget)()); }

void ForceKernelTarget(int64_t target) { hwy::SetSupportedTargetsForTest(target); }

}  // namespace mineru::ops
#endif  // HWY_ONCE
