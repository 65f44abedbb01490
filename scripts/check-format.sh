#!/usr/bin/env bash
# Fails when a tracked C++ file is not as clang-format (Debian 12's clang-format 14, the
# repository's .clang-format) writes it, naming the files; `--fix` rewrites them instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
if ! report=$(clang-format --dry-run --Werror "${files[@]}" 2>&1); then
  echo "check-format: not clang-formatted (scripts/check-format.sh --fix rewrites them):" >&2
  grep -oE '^[^: ]+\.(cc|h):' <<<"$report" | tr -d ':' | sort -u | sed 's/^/  /' >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
