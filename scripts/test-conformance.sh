#!/usr/bin/env bash
# The conformance stage of CI: ONNX's backend test suite (Debian's libonnx-testdata, installed by
# install-deps.sh) through mt-convert and mt-run on reference, cpu and vulkan (lavapipe), against
# tests/conformance/expected_refusals.txt (scripts/onnx_conformance.py). A wrong result, a crash, a
# refusal not on the list, or a listed test that now passes fails it. Needs the tools in build/.
set -euo pipefail
cd "$(dirname "$0")/.."
# Vulkan on Mesa's lavapipe, as the vulkan integration tests: results do not depend on the machine's GPU.
lavapipe_icd=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
if [[ -z "${VK_ICD_FILENAMES:-}" && -f "$lavapipe_icd" ]]; then export VK_ICD_FILENAMES="$lavapipe_icd"; fi
require_vulkan=()
[[ "${MT_REQUIRE_VULKAN:-}" == 1 ]] && require_vulkan=(--require-vulkan)
start=$SECONDS
status=0
/usr/bin/python3 scripts/onnx_conformance.py --tools build/tools --jobs "${MT_CONFORMANCE_JOBS:-2}" "${require_vulkan[@]}" \
  >build/conformance.txt || status=$?
# The per-test lines stay in build/conformance.txt; the totals and every failure go to the log.
sed -n '/^[0-9]* tests in /,$p' build/conformance.txt
echo "test-conformance: $((SECONDS - start)) s (per test: build/conformance.txt)"
exit $status
