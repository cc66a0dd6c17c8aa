# Install rules and the exported package of tfc (included by the top-level
# CMakeLists.txt after every target exists).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The tools a user runs. Runtime tools link libtfcrt statically; the
# compiler's tools find libMLIR/libLLVM in LLVM's library directory, as in the
# build tree.
set(TFC_INSTALLED_TOOLS
  tfc-compile tfc-opt tfc-import tfc-interpret
  tfc-run tfc-generate tfc-tokenize tfc-weights tfc-pack tfc-perplexity
  tfc-quantize tfc-tune)
set_target_properties(${TFC_INSTALLED_TOOLS} PROPERTIES
  INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR};${LLVM_LIBRARY_DIR}")
install(TARGETS ${TFC_INSTALLED_TOOLS} tfcrt_shared
  EXPORT tfcTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The CUDA emulator: a driver to point TFC_CUDA_DRIVER at, not linked.
install(TARGETS tfc_cuda_emulator
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/tfc/Runtime/tfc.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tfc/Runtime)

set(TFC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tfc)
install(EXPORT tfcTargets NAMESPACE tfc:: DESTINATION ${TFC_CMAKE_DIR})
export(EXPORT tfcTargets NAMESPACE tfc::
  FILE ${CMAKE_BINARY_DIR}/${TFC_CMAKE_DIR}/tfcTargets.cmake)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tfcConfig.cmake.in
  ${CMAKE_BINARY_DIR}/${TFC_CMAKE_DIR}/tfcConfig.cmake
  INSTALL_DESTINATION ${TFC_CMAKE_DIR})
write_basic_package_version_file(
  ${CMAKE_BINARY_DIR}/${TFC_CMAKE_DIR}/tfcConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_BINARY_DIR}/${TFC_CMAKE_DIR}/tfcConfig.cmake
  ${CMAKE_BINARY_DIR}/${TFC_CMAKE_DIR}/tfcConfigVersion.cmake
  DESTINATION ${TFC_CMAKE_DIR})

# pkg-config: Libs and Cflags relative to the prefix the file is found in.
file(RELATIVE_PATH TFC_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
configure_file(${PROJECT_SOURCE_DIR}/cmake/tfc.pc.in
  ${CMAKE_BINARY_DIR}/tfc.pc.install @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/tfc.pc.install
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig RENAME tfc.pc)
