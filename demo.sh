#!/usr/bin/env bash
# The main job on the built-in default, no files needed: makes sure a Vulkan adapter exists
# (installs the lavapipe software driver when there is no GPU), builds in release and runs it.
set -euo pipefail
cd "$(dirname "$0")"
if ! { ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json >/dev/null 2>&1 &&
    ldconfig -p | grep -q 'libvulkan\.so\.1'; }; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq mesa-vulkan-drivers libvulkan1 >/dev/null
fi
# The Vulkan loader wants a runtime dir; containers often lack one.
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "$XDG_RUNTIME_DIR" ]; then
    export XDG_RUNTIME_DIR=/tmp/chromaflow-xdg
    mkdir -p -m 700 "$XDG_RUNTIME_DIR"
fi
if [ "$#" -eq 0 ]; then
    set -- dg --builtin dmr --out out/dg --overwrite
fi
cargo run --release -- "$@"
