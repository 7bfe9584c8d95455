# SPDX-License-Identifier: Apache-2.0
# kiln_embed_sources(<target> HEADER <name> NAMESPACE <ns> FILES <file>...)
#
# Embeds text files (kernel sources, the CUDA prelude) in <target> at build time, so that what
# ships with kiln is never looked up on disk. Generates <binary dir>/kiln_embedded/<name>.hpp with
# one `inline constexpr std::string_view` per file, named after the file ("heat_cell.cl" becomes
# heat_cell_cl), and `embedded_file(name)`, which finds one by its file name (empty when unknown).
# The header is regenerated whenever one of the files changes.
set(KILN_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/kilnEmbedScript.cmake)

function(kiln_embed_sources target)
    cmake_parse_arguments(PARSE_ARGV 1 embed "" "HEADER;NAMESPACE" "FILES")
    if(NOT embed_HEADER OR NOT embed_NAMESPACE OR NOT embed_FILES)
        message(FATAL_ERROR "kiln_embed_sources(${target}): HEADER, NAMESPACE and FILES are required")
    endif()
    set(folder ${CMAKE_CURRENT_BINARY_DIR}/kiln_embedded)
    set(header ${folder}/${embed_HEADER}.hpp)
    set(absolute_files "")
    foreach(file IN LISTS embed_FILES)
        cmake_path(ABSOLUTE_PATH file BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} NORMALIZE)
        list(APPEND absolute_files ${file})
    endforeach()
    string(REPLACE ";" "|" file_argument "${absolute_files}")
    add_custom_command(OUTPUT ${header}
        COMMAND ${CMAKE_COMMAND} "-DOUTPUT=${header}" "-DNAMESPACE=${embed_NAMESPACE}"
                "-DFILES=${file_argument}" -P ${KILN_EMBED_SCRIPT}
        DEPENDS ${absolute_files} ${KILN_EMBED_SCRIPT}
        COMMENT "Embedding ${embed_HEADER}: ${embed_FILES}"
        VERBATIM)
    target_sources(${target} PRIVATE ${header})
    target_include_directories(${target} PRIVATE ${folder})
endfunction()
