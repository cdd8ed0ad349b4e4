#!/bin/sh
# Builds p44 on x86-64 against unpacked Vulkan headers (apt-get download libvulkan-dev; dpkg -x it into $VKDEV).
cc -O2 -std=c11 -D_POSIX_C_SOURCE=199309L -Wall -Wextra -I"${VKDEV:-/tmp/vkdev}/usr/include" -o "${1:-p44}" "$(dirname "$0")/p44.c" -l:libvulkan.so.1
