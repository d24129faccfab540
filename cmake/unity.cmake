# Unity builds, to cut a cold build's CPU time: CMakePresets.json's dev, asan and tsan presets set
# CMAKE_UNITY_BUILD, so CMake compiles each target's sources in batches of
# CMAKE_UNITY_BUILD_BATCH_SIZE files, one translation unit per batch. nlohmann/json, Catch2,
# Boost.Asio and the standard library are then parsed, and their templates instantiated, once per
# batch instead of once per file: measured on the project's machine, eight lib/core sources took
# 18.6 s of CPU one by one and 7.8 s as one batch. A plain `cmake -S . -B build` (no preset)
# compiles file by file, which keeps a one-file edit a one-file rebuild; so does the fuzz preset,
# which also proves there that every file of the modules it compiles includes what it uses.
#
# Every file's own names must therefore be unique within its target: a file-local helper that
# another file of the target also defines (every subcommand's kName and makeOptions, the unit
# tests' Fixture) lives in a namespace named after its file (cli/src/*_command.cpp, the test files
# that need it), and a type an exported class holds is never in an anonymous namespace (GCC's
# -Wsubobject-linkage treats a .cpp included into a batch as a header; lib/webhook/src/server.cpp).
#
# restarter_compile_alone(<files...>): keep these sources out of the batches, only to let two
# cores share a target's costliest sources (lib/http's listener and connection). Call it in the
# CMakeLists.txt that adds the target (source properties are per directory).
function(restarter_compile_alone)
  set_source_files_properties(${ARGN} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
