#!/usr/bin/env bash
# Packs TileLang 0.1.15 for the GPU machine (Python 3.12, no TileLang there): the cp312 wheels of tilelang 0.1.15,
# apache-tvm-ffi 0.1.12 (0.1.15 needs < 0.1.13), torch-c-dlpack-ext and z3-solver 4.15.x (tilelang's
# libtvm_compiler.so links libz3.so.4.15: a newer z3 fails at import), unzipped into one folder (pip refuses cp312
# wheels on another Python) without the z3 executable and cutlass's tools/, xz-packed into .carry/tl.tar.xz (about
# 47 MB: it fits the device tool's 64 MiB carry limit beside the checkout, not beside .whl as well). gpu_run.sh and
# the .prof call scripts unpack it onto PYTHONPATH.
#   bash tools/pack_tilelang.sh   (needs pip download access to the wheels)
set -euo pipefail
W=$(mktemp -d)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux2014_x86_64 -d "$W" \
  tilelang==0.1.15 apache-tvm-ffi==0.1.12 torch-c-dlpack-ext "z3-solver>=4.15,<4.16"
mkdir -p "$W/site"
for w in "$W"/*.whl; do unzip -q -o "$w" -d "$W/site"; done
rm -rf "$W"/site/*.data "$W/site/tilelang/3rdparty/cutlass/tools"
mkdir -p .carry
(cd "$W/site" && tar cf - . | xz -T0 -6 > "$OLDPWD/.carry/tl.tar.xz")
rm -rf "$W"
ls -la .carry/tl.tar.xz
