# `cpack -G DEB` in a build directory configured with -DCMAKE_INSTALL_PREFIX=/usr makes three
# Debian packages, one per install component:
#   libhkb<SOVERSION>  runtime: the shared library, the code objects and manifest as files
#   libhkb-dev         development: headers, the libhkb.so link, CMake package, pkg-config file
#   hkb-tools          tool: the hkb command and candle's ABI table it checks against
# Dependencies on Debian's libraries come from dpkg-shlibdeps.
set(CPACK_PACKAGE_NAME hkb)
set(CPACK_PACKAGE_VENDOR "hkb")
set(CPACK_PACKAGE_CONTACT "hkb maintainers <hkb@invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "HIP kernel bundle: candle's GPU kernels as AMD code objects, loaded by name")
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
set(CPACK_COMPONENTS_ALL runtime development tool)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME "libhkb${PROJECT_VERSION_MAJOR}")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME libhkb-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_TOOL_PACKAGE_NAME hkb-tools)
set(CPACK_DEBIAN_TOOL_PACKAGE_SECTION devel)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "hkb runtime library and code objects")
set(CPACK_COMPONENT_DEVELOPMENT_DESCRIPTION "hkb headers, CMake package and pkg-config file")
set(CPACK_COMPONENT_TOOL_DESCRIPTION "the hkb tool: list, doctor, check, report, info")
set(CPACK_COMPONENT_DEVELOPMENT_DEPENDS runtime)
include(CPack)
