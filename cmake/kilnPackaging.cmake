# SPDX-License-Identifier: Apache-2.0
# kiln.pc for pkg-config users, and `cpack -G DEB`: a Debian package with the library, its
# headers, its CMake and pkg-config files, kiln-info, the heat-world tools and the licence.

set(KILN_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
cmake_path(RELATIVE_PATH CMAKE_INSTALL_PREFIX BASE_DIRECTORY ${CMAKE_INSTALL_PREFIX}/${KILN_PC_DIR}
           OUTPUT_VARIABLE KILN_PC_PREFIX_FROM_PCDIR)
string(REGEX REPLACE "/$" "" KILN_PC_PREFIX_FROM_PCDIR "${KILN_PC_PREFIX_FROM_PCDIR}")
string(REPLACE ";" ", " KILN_BACKENDS_PC "${KILN_BACKENDS}")
# What libkiln itself links. A static libkiln.a carries none of it, so there every consumer needs
# it on its link line: plain `pkg-config --libs kiln` must work without --static.
set(kiln_dependency_libs "-pthread")
foreach(library IN LISTS CMAKE_DL_LIBS)
    string(APPEND kiln_dependency_libs " -l${library}")
endforeach()
if(KILN_HAVE_OPENCL)
    string(APPEND kiln_dependency_libs " -lOpenCL")
endif()
if(KILN_LIBRARY_TYPE STREQUAL "SHARED_LIBRARY")
    set(KILN_PC_LIBS "-lkiln")
    set(KILN_PC_PRIVATE_LIBS "${kiln_dependency_libs}")
else()
    set(KILN_PC_LIBS "-lkiln ${kiln_dependency_libs}")
    set(KILN_PC_PRIVATE_LIBS "")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/kiln.pc.in ${PROJECT_BINARY_DIR}/kiln.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kiln.pc DESTINATION ${KILN_PC_DIR})

# The licence goes with every install: its text, and a machine-readable copyright file (Debian's
# DEP-5 format) at the path Debian policy gives it, /usr/share/doc/<package>/copyright.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${CMAKE_CURRENT_LIST_DIR}/debian-copyright DESTINATION ${CMAKE_INSTALL_DOCDIR}
        RENAME copyright)

set(CPACK_PACKAGE_NAME kiln)
set(CPACK_PACKAGE_VENDOR "kiln")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPGPU for C++ without the agonizing pain")
set(CPACK_PACKAGE_CONTACT "kiln developers <kiln@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_RPM_PACKAGE_LICENSE Apache-2.0)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
# dpkg-shlibdeps derives the run-time dependencies (libOpenCL, libstdc++, libpng...) from the
# binaries; libcuda and libnvrtc are loaded at run time and stay optional.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "pocl-opencl-icd, nvidia-opencl-icd")
set(CPACK_DEBIAN_PACKAGE_DEPENDS "")
include(CPack)
