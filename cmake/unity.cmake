# Unity builds, to cut a cold build's CPU time: CMakePresets.json's dev, asan and tsan presets set
# CMAKE_UNITY_BUILD, so CMake compiles each target's sources in batches of
# CMAKE_UNITY_BUILD_BATCH_SIZE files, one translation unit per batch. nlohmann/json, Catch2,
# Boost.Asio and the standard library are then parsed, and their templates instantiated, once per
# batch instead of once per file: measured on the project's machine, eight lib/core sources took
# 18.6 s of CPU one by one and 7.8 s as one batch. A plain `cmake -S . -B build` (no preset)
# compiles file by file, which keeps a one-file edit a one-file rebuild; so does the fuzz preset,
# which also proves there that every file of the modules it compiles includes what it uses.
#
# restarter_compile_alone(<files...>): keep these sources out of the batches. For files that
# define a file-local name (in an anonymous namespace) that another file of the same target also
# defines, such as every subcommand's kName and makeOptions or the unit tests' Fixture, and for
# files whose classes hold file-local types (GCC's -Wsubobject-linkage treats a .cpp included into
# a batch as a header). Call it in the CMakeLists.txt that adds the target (source properties are
# per directory).
function(restarter_compile_alone)
  set_source_files_properties(${ARGN} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
