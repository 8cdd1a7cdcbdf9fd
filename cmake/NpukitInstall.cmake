# What `cmake --install build --prefix P` puts under P: libnpukit.so and its headers, the
# npukit CLI, a CMake package (find_package(npukit 0.2) -> npukit::npukit) and npukit.pc;
# with libtorch-dev, the PyTorch extension beside libnpukit.so; and what operator plug-ins
# are built with (find_package(npukit 0.2 COMPONENTS operator) -> npukit_add_operator,
# docs/authoring.md). The Python module installs itself (python/CMakeLists.txt).
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

# Operator plug-ins: the static libraries a plug-in links its own hidden copy of (what an
# entry, a golden, a Generator and an NPU schedule call; PIC, like the whole tree), the
# headers they are written against (P/include/npukit/sdk, with the tree's paths, so an op's
# files are the same in and out of the tree), the kit's version and its CMake functions.
# Nothing here is in libnpukit.so, which stays free of golden code and libHalide.
set_target_properties(npukit_op_support PROPERTIES EXPORT_NAME op_support)
set_target_properties(npukit_golden_support PROPERTIES EXPORT_NAME golden_support)
set_target_properties(npukit_simulator PROPERTIES EXPORT_NAME simulator)
set_target_properties(npukit_npu_support PROPERTIES EXPORT_NAME npu_support)
set_target_properties(npukit_halide_helpers PROPERTIES EXPORT_NAME halide_helpers)
install(TARGETS npukit_op_support npukit_golden_support npukit_simulator npukit_npu_support npukit_halide_helpers
        EXPORT npukitOperatorTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}/npukit)
install(EXPORT npukitOperatorTargets NAMESPACE npukit:: DESTINATION ${NPUKIT_CMAKE_DIR})
set(_npukit_sdk_headers
  golden/array.h golden/case_builder.h golden/cases.h golden/half.h golden/input_class.h golden/metrics.h
  golden/requantize.h golden/seed.h golden/tolerance.h
  ops/exact_f64.h ops/exp_f64.h ops/float_convert.h ops/fma.h ops/prefetch.h ops/sincos.h
  runtime/cpu_features.h runtime/cpu_variant.h runtime/dims.h runtime/error.h runtime/gpu_call.h
  runtime/gpu_device.h runtime/halide_call.h runtime/kernel_call.h runtime/message.h runtime/name_less.h
  runtime/op_spec.h runtime/operator_plugin.h runtime/params.h runtime/plugin.h runtime/scratch_arena.h
  runtime/tensor.h runtime/text.h
  schedules/npu/npu_pipeline.h schedules/npu/npu_plan.h schedules/npu/npu_plugin.h schedules/npu/npu_schedule.h
  simulator/analysis/op_analysis.h simulator/arch/arch_spec.h simulator/rules/footprint.h
  tools/gate/gate_hooks.h tools/gate/gate_plugin.h)
foreach (h IN LISTS _npukit_sdk_headers)
  get_filename_component(dir ${h} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${h} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/npukit/sdk/${dir})
endforeach ()
install(FILES ${CMAKE_BINARY_DIR}/generated/npukit/kit_version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/npukit)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/NpukitOperatorPlugin.cmake ${CMAKE_CURRENT_LIST_DIR}/NpukitKernels.cmake
              ${CMAKE_CURRENT_LIST_DIR}/NpukitSections.cmake
              ${CMAKE_CURRENT_LIST_DIR}/NpukitPrebuiltKernels.cmake ${CMAKE_CURRENT_LIST_DIR}/npukit_operator_plugin.map
        DESTINATION ${NPUKIT_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/npukitConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/npukitConfig.cmake
                              INSTALL_DESTINATION ${NPUKIT_CMAKE_DIR}
                              PATH_VARS CMAKE_INSTALL_BINDIR)
# 0.x: a minor release may change the C ABI, so 0.2 accepts only 0.2.*.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/npukitConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/npukitConfig.cmake ${CMAKE_BINARY_DIR}/npukitConfigVersion.cmake
        DESTINATION ${NPUKIT_CMAKE_DIR})

# pkg-config: the prefix is found from the .pc file's own place (${pcfiledir}).
file(RELATIVE_PATH NPUKIT_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
configure_file(${CMAKE_CURRENT_LIST_DIR}/npukit.pc.in ${CMAKE_BINARY_DIR}/npukit.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/npukit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
