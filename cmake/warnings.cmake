# restarter_apply_warnings(<target>): the project's warning set, errors in CI (RESTARTER_WERROR),
# and the sanitizer flags when RESTARTER_SANITIZE is on. Applied to every target we own, never to
# third-party code.
function(restarter_apply_warnings target)
  restarter_warning_options(${target})
  # The shared precompiled header (cmake/pch.cmake); no-op when RESTARTER_PCH is off.
  restarter_use_pch(${target})
endfunction()

# restarter_warning_options(<target>): the warning options alone. The targets that only build a
# precompiled header take them too: -Wpedantic changes the predefined macros (__cpp_runtime_arrays),
# and GCC rejects a PCH built with other macros.
function(restarter_warning_options target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
    -Wold-style-cast -Woverloaded-virtual -Wimplicit-fallthrough -Wformat=2)
  # Not -Wnull-dereference: at -O2 GCC 12 reports false positives inside nlohmann/json's inlined
  # iterators, which no code of ours can avoid. ASan/UBSan catch real null dereferences instead.
  if(RESTARTER_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

if(RESTARTER_SANITIZE)
  # Applied globally so that every object file, including test mains, is instrumented alike.
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
endif()

if(RESTARTER_TSAN)
  if(RESTARTER_SANITIZE OR RESTARTER_FUZZ)
    message(FATAL_ERROR "RESTARTER_TSAN cannot be combined with RESTARTER_SANITIZE or RESTARTER_FUZZ (ASan and TSan exclude each other)")
  endif()
  # Global, like the ASan flags: every object file is instrumented, or races through
  # uninstrumented code of ours would go unseen.
  # -Wno-tsan: GCC 12 warns that TSan does not model std::atomic_thread_fence, which Boost.Asio
  # uses (lib/http); with warnings as errors that would stop the build. The cost of the gap is a
  # possible false report in code ordered only by such a fence, which would fail the stage loudly,
  # never hide a race.
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer -Wno-tsan)
  add_link_options(-fsanitize=thread)
endif()

if(RESTARTER_FUZZ)
  # libFuzzer needs clang; GCC has no -fsanitize=fuzzer.
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "RESTARTER_FUZZ needs clang (-DCMAKE_CXX_COMPILER=clang++), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  if(RESTARTER_SANITIZE)
    message(FATAL_ERROR "RESTARTER_FUZZ already builds with ASan+UBSan; leave RESTARTER_SANITIZE off")
  endif()
  # Every object file gets coverage feedback for libFuzzer (fuzzer-no-link) and ASan+UBSan, so a
  # bug deep in lib/ is found and reported, not only in the fuzz target itself. Only the fuzz
  # executables link libFuzzer's main (tests/fuzz/CMakeLists.txt).
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
endif()
