// SPDX-License-Identifier: Apache-2.0
// The compile cache: built programs kept in memory per process and on disk across processes.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <filesystem>
#include <optional>

namespace kiln::program_cache {

/// The disk cache's directory: KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln.
/// Empty when the disk cache is off (KILN_CACHE_DIR set to an empty string, or no home).
std::filesystem::path directory();

/// Forgets the programs kept in memory (the disk cache stays), e.g. to measure a warm start.
void clear_memory();

/// Programs kept in memory at most; the least recently used is forgotten first.
inline constexpr std::size_t default_memory_capacity = 512;
/// Keeps at most `entries` programs in memory from now on, forgetting the least recently used
/// beyond them at once.
void set_memory_capacity(std::size_t entries);
/// Programs kept in memory now.
std::size_t memory_size();

/// Counters of the compile cache since the process started.
struct statistics {
    std::size_t memory_hits = 0;  ///< programs found in memory
    std::size_t disk_hits = 0;    ///< programs loaded from the disk cache
    std::size_t compiles = 0;     ///< programs compiled from source
    /// Entries found but refused and rebuilt: corrupt, truncated, mismatched, not signed with
    /// this user's key (written by someone else, or before the key was replaced), not a regular
    /// file (directory, FIFO, device, symbolic link), over the 64 MiB entry cap, or unreadable; and
    /// every entry on a device that must not load stored binaries (PoCL run with
    /// POCL_KERNEL_CACHE=0, which removes a loaded binary's files from under other programs).
    std::size_t disk_rejected = 0;
    std::size_t disk_write_failures = 0;  ///< entries that could not be stored (read-only dir...)
};
/// The counters now.
statistics stats();

}  // namespace kiln::program_cache
#pragma GCC visibility pop
