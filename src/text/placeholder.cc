// SPDX-License-Identifier: Apache-2.0
// Placeholder translation unit; replaced by the layer's sources.
