# Sourced by tests/integration/vulkan_*.sh: pins the Vulkan driver and decides whether a missing
# device skips the test (exit 77, saying why) or, with MT_REQUIRE_VULKAN=1 (scripts/test.sh, CI), fails it.
#
# The driver: $MT_VULKAN_ICD if set, else Mesa's lavapipe when installed, so that results do not
# depend on the machine's GPU; VK_ICD_FILENAMES set by the caller is kept.
source "$MT_SOURCE_DIR/tests/integration/common.bash"

lavapipe_icd=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
if [[ -n "${MT_VULKAN_ICD:-}" ]]; then
  export VK_ICD_FILENAMES="$MT_VULKAN_ICD"
elif [[ -z "${VK_ICD_FILENAMES:-}" && -f "$lavapipe_icd" ]]; then
  export VK_ICD_FILENAMES="$lavapipe_icd"
fi

# Exits the test unless mt-run can see a Vulkan device: 77 (skipped) normally, 1 with MT_REQUIRE_VULKAN=1.
require_vulkan_device() {
  local devices
  devices=$(mt-run --list-devices) || fail "mt-run --list-devices failed"
  grep -qx vulkan <<<"$devices" || fail "this mt was built without the vulkan backend"
  if grep -q "^  unavailable:" <<<"$devices"; then
    if [[ "${MT_REQUIRE_VULKAN:-}" == 1 ]]; then
      fail "MT_REQUIRE_VULKAN=1 but no Vulkan device (VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-unset}): $(grep '^  unavailable:' <<<"$devices")"
    fi
    echo "SKIP: no Vulkan device: $(grep '^  unavailable:' <<<"$devices")" >&2
    exit 77
  fi
  echo "$devices" >&2
}
