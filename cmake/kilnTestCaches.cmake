# SPDX-License-Identifier: Apache-2.0
# Compile caches of its own for every test, kiln's (KILN_CACHE_DIR) and PoCL's (POCL_CACHE_DIR),
# so that runs never depend on ~/.cache and two tests never build into one folder, even side by
# side under ctest -j (issue 66: algo.binary16_scan died of a segmentation fault while
# algo.binary16_scan_split, which shared both folders, ran beside it). Each directory that adds
# tests calls kiln_private_test_caches() once, after its last add_test: test properties can be
# set only from the directory that made the test (CMake 3.25). Calling it again does nothing more.
# tests.private_caches (tests/support/check_private_caches.cmake) checks that no two tests share
# a folder.
#
# A test's folders are cache/<test> and pocl-cache/<test> in its directory's build folder:
# scripts/test.sh copies every folder named cache or pocl-cache into the sanitizer builds, so
# that they start from the release run's compiled programs.
#
# - A test that names either variable in its ENVIRONMENT keeps that choice (the CUDA tests turn
#   kiln's disk cache off, the tsan.* tests start from a release test's PoCL cache).
# - A test with the property KILN_CACHES_FROM set to an earlier test of its directory (the same
#   binary run again with other filters or settings) runs after that test, and starts from a copy
#   of the caches that test left, rather than compiling the same programs again: the setup test
#   <test>.caches copies them (with empty caches on 2 cores, algo.sort_one_thread beside
#   algo.sort cost 90 CPU-seconds more than after it, 2026-11-25).
function(kiln_private_test_caches)
    get_property(tests DIRECTORY PROPERTY TESTS)
    foreach(test IN LISTS tests)
        get_test_property(${test} ENVIRONMENT environment)
        set(private_caches)
        foreach(variable KILN_CACHE_DIR POCL_CACHE_DIR)
            if(NOT environment MATCHES "(^|;)${variable}=")
                string(REPLACE "KILN_CACHE_DIR" "cache" folder ${variable})
                string(REPLACE "POCL_CACHE_DIR" "pocl-cache" folder ${folder})
                list(APPEND private_caches "${variable}=${CMAKE_CURRENT_BINARY_DIR}/${folder}/${test}")
            endif()
        endforeach()
        # Tests given both already (by their own choice, or by an earlier call) are left alone.
        if(NOT private_caches)
            continue()
        endif()
        set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT ${private_caches})
        get_test_property(${test} KILN_CACHES_FROM earlier)
        if(earlier)
            set(script "true")
            foreach(folder cache pocl-cache)
                set(from ${CMAKE_CURRENT_BINARY_DIR}/${folder}/${earlier})
                set(to ${CMAKE_CURRENT_BINARY_DIR}/${folder}/${test})
                string(APPEND script " && mkdir -p '${to}' && ([ ! -d '${from}' ] || cp -a '${from}/.' '${to}/')")
            endforeach()
            add_test(NAME ${test}.caches COMMAND sh -c "${script}")
            set_tests_properties(${test}.caches PROPERTIES DEPENDS ${earlier}
                                 FIXTURES_SETUP ${test}.caches)
            set_tests_properties(${test} PROPERTIES FIXTURES_REQUIRED ${test}.caches)
        endif()
    endforeach()
endfunction()
