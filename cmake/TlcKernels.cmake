# tlc_add_kernels(): translates .tl files with tlc at build time and compiles the CUDA into a target.
#
#   tlc_add_kernels(<target> SOURCES a.tl [b.tl ...]
#                   [ARCH sm_80|sm_86|sm_87|sm_89|sm_90|sm_90a|sm_100|sm_100a|...|sm_121f]
#                   [NAMESPACE name]
#                   [DEFINES NAME=VALUE ...]
#                   [INCLUDE_DIRS dir ...]
#                   [OPTIONS extra tlc flags ...])
#
# For each `x.tl`, a custom command runs `tlc x.tl -o x.cu --header x.h --depfile x.d` into
# ${CMAKE_CURRENT_BINARY_DIR}/tlc_kernels/<target>/, adds x.cu (and x.h) to <target>, and puts
# that directory on <target>'s PUBLIC include path, so that the target and whatever links it can
# `#include "x.h"`. The depfile makes the build re-run tlc when x.tl or any file it imports
# (directly or not) changes; tlc itself is a dependency too.
#
# - ARCH defaults to the target's CUDA_ARCHITECTURES (80 -> sm_80, 90 -> sm_90, 90a-real ->
#   sm_90a, 100f -> sm_100f) when that names one tlc target; otherwise tlc's default (sm_90a)
#   applies. Every entry of CUDA_ARCHITECTURES is checked at configure time: one older than 80, or
#   one tlc does not know, is an error there rather than in the build. sm_90 (without `a`) gets
#   the cp.async + mma.sync code, which needs none of sm_90a's features (wgmma, setmaxnreg);
#   sm_100 and newer get the same code (tlc has no Blackwell-specific path).
# - NAMESPACE: the launch functions become <name>::<kernel> and extern "C" <name>_<kernel> instead
#   of tlc::<kernel> and tlc_<kernel> (tlc --namespace), so that two builds of one .tl file (e.g.
#   -D T=f16 and -D T=bf16, each in its own target) can be linked into one program.
# - Imports are searched next to the importing file, then in INCLUDE_DIRS, then in the tlc stdlib;
#   the CUDA headers of `extern fn`s next to each .tl file, then in INCLUDE_DIRS.
# - Relative SOURCES and INCLUDE_DIRS are relative to the current source directory.
# - <target> must be a compiled target (executable, static, shared, module or object library) in a
#   project that enabled the CUDA language. tlc::runtime is linked PUBLIC (keyword signature).
#
# This file is loaded by find_package(tlc) and, in-tree, by tlc's own CMakeLists.txt; it expects
# the targets tlc::tlc and tlc::runtime and the global property TLC_STDLIB_DIR to exist.
include_guard(GLOBAL)

if(CMAKE_VERSION VERSION_LESS 3.20)
  message(FATAL_ERROR "tlc_add_kernels needs CMake 3.20 or newer (DEPFILE with every generator); "
                      "this is CMake ${CMAKE_VERSION}")
endif()
# Relative paths in depfiles are relative to the current binary directory (tlc writes absolute
# ones here anyway). Functions remember the policies in effect where they are defined.
cmake_policy(SET CMP0116 NEW)

function(tlc_add_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "ARCH;NAMESPACE" "SOURCES;DEFINES;INCLUDE_DIRS;OPTIONS")
  set(where "tlc_add_kernels(${target})")
  # The targets `tlc --arch` accepts (src/driver/options.cpp's arch_names(); tests/run_cli.py
  # checks that the two lists agree).
  set(_TLC_ARCHS
      sm_80 sm_86 sm_87 sm_89 sm_90 sm_90a sm_100 sm_100a sm_100f sm_101 sm_101a sm_101f
      sm_103 sm_103a sm_103f sm_110 sm_110a sm_110f sm_120 sm_120a sm_120f sm_121 sm_121a sm_121f)
  string(REPLACE ";" ", " known "${_TLC_ARCHS}")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unexpected arguments: ${arg_UNPARSED_ARGUMENTS} "
                        "(expected SOURCES, ARCH, NAMESPACE, DEFINES, INCLUDE_DIRS, OPTIONS)")
  endif()
  if(arg_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR "${where}: no value given for ${arg_KEYWORDS_MISSING_VALUES}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "${where}: `${target}` is not a target; create it first "
                        "(add_executable or add_library)")
  endif()
  get_target_property(type ${target} TYPE)
  if(NOT type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
    message(FATAL_ERROR "${where}: `${target}` is a ${type}; the generated CUDA must be compiled "
                        "into an executable or a non-interface library")
  endif()
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "${where}: no SOURCES given")
  endif()
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "CUDA" IN_LIST languages)
    message(FATAL_ERROR "${where}: the CUDA language is not enabled; use "
                        "project(... LANGUAGES CXX CUDA) or enable_language(CUDA)")
  endif()
  foreach(needed tlc::tlc tlc::runtime)
    if(NOT TARGET ${needed})
      message(FATAL_ERROR "${where}: target ${needed} not found; call find_package(tlc CONFIG "
                          "REQUIRED) (or add_subdirectory on tlc) in this directory or a parent")
    endif()
  endforeach()

  # ---- the tlc command line shared by every source ---------------------------------------------
  set(flags "")
  set(arch "${arg_ARCH}")
  get_target_property(cuda_archs ${target} CUDA_ARCHITECTURES)
  set(mapped "")
  if(cuda_archs AND NOT cuda_archs MATCHES "^(all|all-major|native)$")
    foreach(entry IN LISTS cuda_archs)
      if(NOT entry MATCHES "^([0-9]+)([af]?)(-real|-virtual)?$")
        message(FATAL_ERROR "${where}: CUDA_ARCHITECTURES entry `${entry}` is not of the form "
                            "NN, NNa or NNf (optionally -real or -virtual)")
      endif()
      set(candidate "sm_${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
      if(CMAKE_MATCH_1 LESS 80)
        message(FATAL_ERROR "${where}: CUDA_ARCHITECTURES entry `${entry}` (${candidate}) is "
                            "older than sm_80, the oldest target tlc supports (its kernels need "
                            "cp.async and bf16 mma.sync); remove it from CUDA_ARCHITECTURES")
      endif()
      if(NOT candidate IN_LIST _TLC_ARCHS)
        message(FATAL_ERROR "${where}: CUDA_ARCHITECTURES entry `${entry}` (${candidate}) is not "
                            "a target tlc knows; tlc knows ${known}")
      endif()
      list(APPEND mapped "${candidate}")
    endforeach()
    list(REMOVE_DUPLICATES mapped)
  endif()
  if(NOT arch)
    list(LENGTH mapped n_archs)
    if(n_archs EQUAL 1)
      set(arch "${mapped}")
    endif()
  endif()
  if(arch)
    if(NOT arch IN_LIST _TLC_ARCHS)
      message(FATAL_ERROR "${where}: ARCH `${arch}` is not a target tlc knows; tlc knows "
                          "${known}")
    endif()
    list(APPEND flags --arch ${arch})
  endif()
  if(DEFINED arg_NAMESPACE)
    if(NOT arg_NAMESPACE MATCHES "^[A-Za-z][A-Za-z_0-9]*$")
      message(FATAL_ERROR "${where}: NAMESPACE `${arg_NAMESPACE}` is not a C++ identifier "
                          "(a letter, then letters, digits and `_`)")
    endif()
    list(APPEND flags --namespace ${arg_NAMESPACE})
  endif()
  foreach(define IN LISTS arg_DEFINES)
    if(NOT define MATCHES "^[A-Za-z_][A-Za-z_0-9]*=.")
      message(FATAL_ERROR "${where}: DEFINES entry `${define}` is not NAME=VALUE")
    endif()
    list(APPEND flags -D ${define})
  endforeach()
  foreach(dir IN LISTS arg_INCLUDE_DIRS)
    get_filename_component(dir "${dir}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND flags -I "${dir}")
  endforeach()
  get_property(stdlib_dir GLOBAL PROPERTY TLC_STDLIB_DIR)
  if(stdlib_dir)
    list(APPEND flags -I "${stdlib_dir}")
  endif()
  list(APPEND flags ${arg_OPTIONS})

  # ---- one custom command per .tl file ---------------------------------------------------------
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/tlc_kernels/${target}")
  file(MAKE_DIRECTORY "${out_dir}")  # tlc does not create the directories of its outputs
  get_target_property(stems ${target} TLC_KERNEL_STEMS)
  if(NOT stems)
    set(stems "")
  endif()
  foreach(source IN LISTS arg_SOURCES)
    get_filename_component(source "${source}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    get_source_file_property(generated "${source}" GENERATED)
    if(NOT EXISTS "${source}" AND NOT generated)
      message(FATAL_ERROR "${where}: source `${source}` does not exist")
    endif()
    get_filename_component(stem "${source}" NAME_WLE)
    if(stem IN_LIST stems)
      message(FATAL_ERROR "${where}: two sources named `${stem}.tl`; their generated `${stem}.cu` "
                          "and `${stem}.h` would collide (use a second target)")
    endif()
    list(APPEND stems "${stem}")
    set(cu "${out_dir}/${stem}.cu")
    set(header "${out_dir}/${stem}.h")
    set(depfile "${out_dir}/${stem}.d")
    file(RELATIVE_PATH shown "${CMAKE_SOURCE_DIR}" "${source}")
    add_custom_command(
      OUTPUT "${cu}" "${header}"
      COMMAND tlc::tlc "${source}" -o "${cu}" --header "${header}" --depfile "${depfile}" ${flags}
      DEPENDS "${source}" "$<TARGET_FILE:tlc::tlc>"
      DEPFILE "${depfile}"
      COMMENT "tlc: translating ${shown}"
      VERBATIM)
    target_sources(${target} PRIVATE "${cu}" "${header}")
    # The headers of `extern fn`s (`in "my_ops.cuh"`) are found next to the .tl file.
    get_filename_component(source_dir "${source}" DIRECTORY)
    target_include_directories(${target} PRIVATE "$<BUILD_INTERFACE:${source_dir}>")
  endforeach()
  foreach(dir IN LISTS arg_INCLUDE_DIRS)
    get_filename_component(dir "${dir}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    target_include_directories(${target} PRIVATE "$<BUILD_INTERFACE:${dir}>")  # and in INCLUDE_DIRS
  endforeach()
  if(stdlib_dir)  # and in the stdlib, for an imported stdlib file's `extern fn`s (stdlib/int4.cuh)
    target_include_directories(${target} PRIVATE "$<BUILD_INTERFACE:${stdlib_dir}>")
  endif()
  set_property(TARGET ${target} PROPERTY TLC_KERNEL_STEMS "${stems}")

  # ---- what the generated code needs -------------------------------------------------------------
  # The headers declare the launch functions: visible to the target and to whatever links it. They
  # include <cuda_runtime.h>, so host-only C++ files that include them need the toolkit's headers.
  target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${out_dir}>")
  foreach(dir IN LISTS CMAKE_CUDA_TOOLKIT_INCLUDE_DIRECTORIES)
    target_include_directories(${target} SYSTEM PUBLIC "$<BUILD_INTERFACE:${dir}>")
  endforeach()
  target_link_libraries(${target} PUBLIC tlc::runtime)
  target_compile_features(${target} PRIVATE cuda_std_17)
endfunction()
