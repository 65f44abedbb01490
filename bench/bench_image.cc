// SPDX-License-Identifier: Apache-2.0
// Placeholder: replaced by the real benchmark.
int main() { return 0; }
