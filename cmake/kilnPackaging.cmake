# kiln.pc for pkg-config users, and `cpack -G DEB`: a Debian package with the library, its
# headers, its CMake and pkg-config files, kiln-info and the heat-world tools.

set(KILN_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
cmake_path(RELATIVE_PATH CMAKE_INSTALL_PREFIX BASE_DIRECTORY ${CMAKE_INSTALL_PREFIX}/${KILN_PC_DIR}
           OUTPUT_VARIABLE KILN_PC_PREFIX_FROM_PCDIR)
string(REGEX REPLACE "/$" "" KILN_PC_PREFIX_FROM_PCDIR "${KILN_PC_PREFIX_FROM_PCDIR}")
string(REPLACE ";" ", " KILN_BACKENDS_PC "${KILN_BACKENDS}")
set(KILN_PC_PRIVATE_LIBS "-pthread")
foreach(library IN LISTS CMAKE_DL_LIBS)
    string(APPEND KILN_PC_PRIVATE_LIBS " -l${library}")
endforeach()
if(KILN_HAVE_OPENCL)
    string(APPEND KILN_PC_PRIVATE_LIBS " -lOpenCL")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/kiln.pc.in ${PROJECT_BINARY_DIR}/kiln.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kiln.pc DESTINATION ${KILN_PC_DIR})

set(CPACK_PACKAGE_NAME kiln)
set(CPACK_PACKAGE_VENDOR "kiln")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPGPU for C++ without the agonizing pain")
set(CPACK_PACKAGE_CONTACT "kiln developers <kiln@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
# dpkg-shlibdeps derives the run-time dependencies (libOpenCL, libstdc++, libpng...) from the
# binaries; libcuda and libnvrtc are loaded at run time and stay optional.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "pocl-opencl-icd, nvidia-opencl-icd")
set(CPACK_DEBIAN_PACKAGE_DEPENDS "")
include(CPack)
