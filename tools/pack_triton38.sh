#!/usr/bin/env bash
# Packs triton 3.8.0 (the Triton of torch 2.14 / vLLM 0.33, what users compile with) for the GPU machine, whose own
# Triton is 3.6.0: the cp312 wheel trimmed to what compiling and running CUDA kernels needs (libtriton stripped of
# symbols; no proton, no CUPTI, no Blackwell ptxas or nvdisasm), xz-packed into .carry/t38.tar.xz
# (about 48 MiB, under the device tool's 64 MiB carry limit). gpu_run.sh unpacks it when TRITON38=1.
#   bash tools/pack_triton38.sh   (needs network access for pip download, or WHEEL=path/to/the/cp312/wheel)
set -euo pipefail
W=$(mktemp -d)
if [ -n "${WHEEL:-}" ]; then cp "$WHEEL" "$W/"; else
  python3 -m pip download -q triton==3.8.0 --no-deps --python-version 3.12 --only-binary=:all: -d "$W"; fi
mkdir -p "$W/x" && (cd "$W/x" && unzip -q "$W"/triton-3.8.0-cp312-*.whl)
T="$W/x/triton"
rm -rf "$T/_C/libproton.so" "$T/backends/nvidia/lib/cupti" "$T/backends/nvidia/lib/cupti-blackwell" \
       "$T/backends/nvidia/bin/ptxas-blackwell" "$T/backends/nvidia/bin/nvdisasm"
strip --strip-unneeded "$T/_C/libtriton.so" "$T/backends/nvidia/bin/ptxas"
mkdir -p .carry
(cd "$W/x" && tar cf - triton triton-3.8.0.dist-info | xz -T0 -9 > "$OLDPWD/.carry/t38.tar.xz")
rm -rf "$W"
ls -la .carry/t38.tar.xz
