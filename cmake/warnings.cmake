# restarter_apply_warnings(<target>): the project's warning set, errors in CI (RESTARTER_WERROR),
# and the sanitizer flags when RESTARTER_SANITIZE is on. Applied to every target we own, never to
# third-party code.
function(restarter_apply_warnings target)
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
