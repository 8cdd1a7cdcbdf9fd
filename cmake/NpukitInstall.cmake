# What `cmake --install build --prefix P` puts under P: libnpukit.so and its headers, the
# npukit CLI, a CMake package (find_package(npukit 0.2) -> npukit::npukit) and npukit.pc;
# with libtorch-dev, the PyTorch extension beside libnpukit.so. The Python module installs
# itself (python/CMakeLists.txt).
# Every installed file locates the rest relative to itself, so P can be moved.
include(CMakePackageConfigHelpers)

set(NPUKIT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/npukit)

install(TARGETS npukit_shared EXPORT npukitTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/npukit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(TARGETS npukit RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if (TARGET npukit_torch)
  install(TARGETS npukit_torch LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif ()
# The NPU presets, where the installed npukit looks for them (simulator/arch/arch_spec.cpp).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/simulator/arch/presets/ DESTINATION ${CMAKE_INSTALL_DATADIR}/npukit/presets
        FILES_MATCHING PATTERN "*.yaml")

install(EXPORT npukitTargets NAMESPACE npukit:: DESTINATION ${NPUKIT_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/npukitConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/npukitConfig.cmake
                              INSTALL_DESTINATION ${NPUKIT_CMAKE_DIR})
# 0.x: a minor release may change the C ABI, so 0.2 accepts only 0.2.*.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/npukitConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/npukitConfig.cmake ${CMAKE_BINARY_DIR}/npukitConfigVersion.cmake
        DESTINATION ${NPUKIT_CMAKE_DIR})

# pkg-config: the prefix is found from the .pc file's own place (${pcfiledir}).
file(RELATIVE_PATH NPUKIT_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
configure_file(${CMAKE_CURRENT_LIST_DIR}/npukit.pc.in ${CMAKE_BINARY_DIR}/npukit.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/npukit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
