# Precompiled headers (RESTARTER_PCH, GCC only): the third-party headers that dominate compile time
# are parsed once per build directory instead of once per translation unit.
#   restarter_pch       <nlohmann/json.hpp>, reused by every target of ours (restarter_apply_warnings);
#   restarter_test_pch  the same plus <catch2/catch.hpp>, reused by the Catch2 test executables
#                       (restarter_use_test_pch before restarter_apply_warnings).
# One header each, shared with REUSE_FROM: every target of one build directory compiles with the
# same global flags (build type, sanitizers, standard) and warning options, which is what GCC
# requires of a PCH; the targets differ only in include paths and definitions that json and Catch2
# do not read. CMake adds -Winvalid-pch, so with warnings as errors a PCH that GCC rejects fails the
# build instead of silently compiling slower.
#
# Off by default: measured with CPU time, it saves about 20 % per translation unit
# (lib/core/src/json_patch.cpp 12.8 -> 9.4 s, lib/obs/src/log.cpp 17.2 -> 13.8 s,
# tests/unit/core/annotations_test.cpp 26.0 -> 19.0 s), but with GCC 12 at -O2 a file compiled with
# the PCH (json alone is enough) gets -Warray-bounds reports from inside libstdc++'s std::string
# (bits/char_traits.h) that the same file compiled without it does not:
# tests/unit/core/annotation_keys_test.cpp. Switching it on needs a full -Werror build of every
# configuration first, and no warning turned off to get there.
#
# ccache (cmd/build.sh) caches the PCH and the objects that use it (sloppiness pch_defines,
# time_macros), also across fresh clones: the generated header names json and Catch2 by <...>, not by
# an absolute path. Not with clang (the fuzz build): its PCH records the time stamps of the headers
# and ccache would need -fno-pch-timestamp; that build compiles without, which also keeps one build
# proving that the files of the modules it compiles (core, certs, http, obs, kube, webhook) include
# json themselves where they use it. RESTARTER_PCH=OFF shows it for every file.
if(RESTARTER_PCH AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(RESTARTER_PCH_ACTIVE ON)
  add_library(restarter_pch STATIC ${CMAKE_CURRENT_LIST_DIR}/pch.cpp)
  target_link_libraries(restarter_pch PRIVATE nlohmann_json::nlohmann_json)
  target_precompile_headers(restarter_pch PRIVATE <nlohmann/json.hpp>)
  restarter_warning_options(restarter_pch)
else()
  set(RESTARTER_PCH_ACTIVE OFF)
endif()

# restarter_use_pch(<target>): reuse restarter_pch, unless the target already reuses another.
function(restarter_use_pch target)
  if(NOT RESTARTER_PCH_ACTIVE)
    return()
  endif()
  get_target_property(reuse ${target} PRECOMPILE_HEADERS_REUSE_FROM)
  if(NOT reuse)
    target_precompile_headers(${target} REUSE_FROM restarter_pch)
  endif()
endfunction()

# restarter_use_test_pch(<target>): reuse restarter_test_pch (defined in tests/CMakeLists.txt,
# which finds Catch2). Call before restarter_apply_warnings(<target>).
function(restarter_use_test_pch target)
  if(RESTARTER_PCH_ACTIVE)
    target_precompile_headers(${target} REUSE_FROM restarter_test_pch)
  endif()
endfunction()
