# Cross-compiling restarter for linux/arm64 on an amd64 Debian machine with Debian's own aarch64
# toolchain (g++-aarch64-linux-gnu) and the arm64 `-dev` packages installed through multiarch
# (`tests/install-deps.sh --build --target-arch arm64`): the Dockerfile's build stage uses it when
# the image's platform is not the builder's (docs/release.md "On a tag: what a maintainer runs", step 1), and tests/run.sh
# builds the unit tests with it to run them under qemu-user.
#   cmake -S . -B build/arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/linux-arm64.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Multiarch: the target's libraries are in /usr/lib/aarch64-linux-gnu of this very system (no
# sysroot), its pkg-config files there too; never the build machine's amd64 ones.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# Test binaries run under qemu-user (Debian's qemu-user-static): ctest prefixes them with it, so
# they run on an amd64 machine without binfmt_misc.
find_program(RESTARTER_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(RESTARTER_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${RESTARTER_QEMU_AARCH64}")
endif()
