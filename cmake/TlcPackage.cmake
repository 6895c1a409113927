# tlc as a CMake package: tlc::tlc, tlc::runtime and tlc_add_kernels() in-tree, plus the install rules.
#
# In-tree (add_subdirectory on tlc) the targets are aliases of this build's tlc and runtime/; once
# installed, find_package(tlc CONFIG) recreates them from the prefix (cmake/tlcConfig.cmake.in).
# Installed layout under the prefix:
#   bin/tlc                          (installed by src/CMakeLists.txt)
#   include/tlc/tl/...               the runtime headers (the generated code does #include <tl/tl.cuh>)
#   share/tlc/stdlib/*.tl            the operator library (on tlc_add_kernels' import path)
#   share/tlc/editors/{vscode,vim}   editor support (installed by editors/CMakeLists.txt)
#   lib/cmake/tlc/                   tlcConfig.cmake, tlcConfigVersion.cmake, TlcKernels.cmake
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# ---- in-tree targets -----------------------------------------------------------------------------
add_executable(tlc::tlc ALIAS tlc)
add_library(tlc_runtime INTERFACE)
target_include_directories(tlc_runtime INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/runtime>)
add_library(tlc::runtime ALIAS tlc_runtime)
set_property(GLOBAL PROPERTY TLC_STDLIB_DIR ${PROJECT_SOURCE_DIR}/stdlib)
include(${CMAKE_CURRENT_LIST_DIR}/TlcKernels.cmake)

# ---- install rules -------------------------------------------------------------------------------
set(TLC_INSTALL_BINDIR bin)  # where src/CMakeLists.txt installs the executable
set(TLC_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/tlc)
set(TLC_INSTALL_STDLIBDIR ${CMAKE_INSTALL_DATADIR}/tlc/stdlib)
set(TLC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tlc CACHE STRING
    "Where `cmake --install` puts tlc's CMake package (relative to the prefix)")

install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/tl DESTINATION ${TLC_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.cuh" PATTERN "*.h")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/stdlib/ DESTINATION ${TLC_INSTALL_STDLIBDIR}
        FILES_MATCHING PATTERN "*.tl")

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tlcConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/tlcConfig.cmake
  INSTALL_DESTINATION ${TLC_INSTALL_CMAKEDIR}
  PATH_VARS TLC_INSTALL_BINDIR TLC_INSTALL_INCLUDEDIR TLC_INSTALL_STDLIBDIR)
# 0.x: a minor version may break compatibility. The package holds no libraries, so the consumer's
# pointer size does not matter.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/tlcConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${PROJECT_BINARY_DIR}/package/tlcConfig.cmake
              ${PROJECT_BINARY_DIR}/package/tlcConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/TlcKernels.cmake
        DESTINATION ${TLC_INSTALL_CMAKEDIR})
