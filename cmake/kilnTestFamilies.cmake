# SPDX-License-Identifier: Apache-2.0
# Which families of tests a build holds (KILN_TEST_FAMILIES, a list; `all` by default).
# scripts/test.sh builds and runs each family once, in the build where it checks the most for its
# time: the algorithms, whose tests spend their time in the devices' kernels, in the release
# build; the runtime, the expressions, the heat world and the others, whose tests run kiln's host
# code, under AddressSanitizer, with algo_host (the algorithm tests of shared host machinery: the
# look-back's text, kernel contracts, plans, the vocabulary, capture) beside them. Building and
# running every test in both builds took the test command past 60 minutes on 2 cores.
#
# Families: runtime cuda expr algo algo_host kernels mpi interop checks heat_world. The examples'
# tests come with the examples (KILN_BUILD_EXAMPLES), kiln-info's and kiln-prof's (tools/) with
# the tools.
set(KILN_TEST_FAMILIES all CACHE STRING
    "Families of tests to build (cmake/kilnTestFamilies.cmake), or all")

# Sets `result` to whether this build holds the tests of `family`.
function(kiln_test_family_wanted family result)
    if("all" IN_LIST KILN_TEST_FAMILIES OR family IN_LIST KILN_TEST_FAMILIES)
        set(${result} TRUE PARENT_SCOPE)
    else()
        set(${result} FALSE PARENT_SCOPE)
    endif()
endfunction()

# Fails the configure where a family's name is misspelt, rather than building none of it.
set(kiln_test_family_names all runtime cuda expr algo algo_host kernels mpi interop checks
    heat_world)
foreach(family IN LISTS KILN_TEST_FAMILIES)
    if(NOT family IN_LIST kiln_test_family_names)
        message(FATAL_ERROR "KILN_TEST_FAMILIES: no family '${family}' (families: ${kiln_test_family_names})")
    endif()
endforeach()
