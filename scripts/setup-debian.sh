#!/usr/bin/env bash
# Installs what mineru.cpp builds and tests with, from Debian 12 packages. Idempotent: does
# nothing (not even apt-get update) when every package is already installed.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libhwy-dev          # SIMD kernels with run-time dispatch (Highway)
  nlohmann-json3-dev  # JSON
  libexpected-dev     # tl::expected (Result)
  libfmt-dev          # formatting
  libssl-dev          # SHA-256 (libcrypto)
  libcli11-dev        # command line
  libonig-dev         # tokenizer pre-split regex (the engine Hugging Face tokenizers uses)
  libutf8proc-dev     # Unicode NFC normalisation
  libcurl4-openssl-dev  # model downloads from the Hugging Face Hub
  libboost-dev        # Boost.Beast + Asio (header-only): the HTTP server
  libzip-dev          # ZIP archives of the outputs
  libhiredis-dev      # Redis client: the shared document cache (cache/redis_client.h)
  redis-server        # a real Redis for the cache tests (tests/support/redis_server.h)
  librabbitmq-dev     # AMQP client (rabbitmq-c): the RabbitMQ task queue (celery/amqp_client.h)
  rabbitmq-server     # a real RabbitMQ for the queue tests (tests/support/rabbitmq_server.h)
  libpng-dev libjpeg62-turbo-dev libwebp-dev libtiff-dev libgif-dev libexif-dev  # image codecs
  libpoppler-cpp-dev  # PDF rendering, in its own helper process
  libpoppler-glib-dev # the original PDF pages drawn under <stem>_layout.pdf's boxes (render helper)
  libcairo2-dev       # <stem>_layout.pdf, and the tokens drawn into masked table crops
  fonts-dejavu-core   # DejaVu Sans: the font of those tokens (MinerU's client tries Arial, then it)
  libgtest-dev        # tests
  clang-format        # the formatting check of scripts/test.sh (clang-format 14)
  clang-14 libclang-rt-14-dev llvm-14  # fuzzing (scripts/fuzz.sh): libFuzzer and the sanitizer
                                       # runtimes are in libclang-rt-14-dev, llvm-symbolizer in llvm-14
  libbenchmark-dev    # kernel micro-benchmarks
  python3-pil python3-numpy python3-jsonschema poppler-utils qpdf  # test references: Pillow, pdftotext, qpdf, JSON Schema
  openssl             # a self-signed certificate for the HTTPS model server test
  python3-celery python3-redis  # Celery interop: fixtures and the live round trip (tests/celery/celery_fixtures.py)
  chromium            # the web UI's browser test (tests/webui/e2e.mjs)
)
# Node.js and npm (the web UI's libraries, test references and the Qwen vocabulary from the
# npm registry): any installation will do; Debian's packages only when none is on the PATH.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "installing: ${missing[*]}"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
