// SPDX-License-Identifier: Apache-2.0
// Writing a file that kiln or one of its programs produces (a profile, a picture, a cache entry)
// so that a failure never loses or truncates what was there, and no file but the one named is
// touched; and reading kiln's own files back without trusting what sits at their paths. The
// library's profiler and caches and the programs (through tools/support/atomic_file.hpp) share it.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace kiln::detail {

// The system calls that move the bytes, so that a test can make one fail as a full disk does
// (ENOSPC) without root, a loop device or LD_PRELOAD. Everything else uses the defaults.
struct file_system_calls {
    std::function<ssize_t(int fd, const void* data, std::size_t size)> write = ::write;
    std::function<ssize_t(int fd, const void* data, std::size_t size, off_t offset)> pwrite =
        ::pwrite;
    std::function<int(int fd)> fsync = ::fsync;
    std::function<int(const char* from, const char* to)> rename = ::rename;
};

// How write_file delivered the bytes.
enum class delivery {
    replaced,  // a temporary file renamed into place
    streamed,  // written into something that is not a regular file (a device, a FIFO, a descriptor)
};

// Writes `size` bytes to the file `path`.
// - A name for one of the process's open descriptors (/dev/stderr, /dev/fd/N, /proc/self/fd/N,
//   or a symbolic link leading to one) is written into that descriptor, whatever it is open on,
//   as a shell writes `> /dev/stderr`: after what it already took, never replacing its file.
// - A regular file, or a path where nothing exists yet, is replaced atomically: the bytes go to a
//   new temporary file in the same folder, whose name cannot be guessed and which is created
//   exclusively (O_EXCL | O_NOFOLLOW, so nothing planted there is followed); it is flushed to
//   disk (fsync) and renamed over `path`, so readers and a crash see the old content or the new,
//   never a part. A replaced file keeps its permission bits (and its owner and group where the
//   process may set them); a new file gets 0666 less the umask, as one the shell creates. A
//   symbolic link is followed: the file it names is replaced and the link stays. A file the
//   process may not write, or one with no write permission bit at all (even for root), is
//   refused, even when its folder would allow the rename.
// - Anything else that exists (a character device such as /dev/null, a FIFO, a terminal) is
//   opened for writing without creating or truncating it and written as a stream.
// On failure the temporary file is removed, nothing that existed is removed or changed (a stream
// may have taken part of the bytes), and std::runtime_error names the file and the reason, e.g.
// "writing 'heat.bmp' failed: No space left on device; 'heat.bmp' is unchanged".
delivery write_file(const std::string& path, const void* data, std::size_t size,
                    const file_system_calls& calls = {});

// A file replaced whole, as write_file replaces one, by a writer that puts the bytes in place
// itself: at their offsets, from several threads, or from other processes through the temporary
// file's name (step_world_mpi's ranks each write their rows). begin() makes the temporary file
// as write_file does and reserves its full size (fallocate), so that a full disk fails before
// any byte is written where the file system can reserve space; commit() flushes it to disk and
// renames it over the name. Destroyed uncommitted (a failure anywhere), it removes the temporary
// file, and the name keeps what it held.
class file_replacement {
  public:
    // Begins replacing `path` by a file of `size` bytes. nullptr where write_file would stream
    // instead (a name for an open descriptor, a device, a FIFO). Throws std::runtime_error as
    // write_file does for a name it cannot replace (a folder, a file without write permission,
    // a folder where no file can be created), and "writing 'x' failed: <reason>; 'x' is
    // unchanged" (or "; no file was created") when the space cannot be reserved.
    static std::unique_ptr<file_replacement> begin(const std::string& path, std::uint64_t size);
    file_replacement(const file_replacement&) = delete;
    file_replacement& operator=(const file_replacement&) = delete;
    ~file_replacement();

    // The temporary file, open for writing.
    int fd() const;
    // Its name, where another process opens it (open_replacement_part).
    const std::string& temporary_path() const;
    // Whether a file is there to be replaced, for replacement_failure's message.
    bool replaces_existing() const;
    // Gives the file the replaced one's permissions, flushes it to disk and renames it over the
    // name; throws as write_file does, the temporary file then removed.
    void commit(const file_system_calls& calls = {});

    // The temporary file and what it replaces; atomic_file.cpp's, where write_file uses it too.
    class state;

  private:
    explicit file_replacement(std::unique_ptr<state> begun);
    std::unique_ptr<state> state_;
};

// Opens the temporary file of a replacement that another process began, to write its share of
// the bytes: never creating a file, never following a link. -1 with errno when it cannot.
int open_replacement_part(const std::string& temporary_path);

// The message for a replacement of `path` that failed in any process: "writing 'x' failed:
// No space left on device; 'x' is unchanged", or "...; no file was created".
std::string replacement_failure(const std::string& path, bool replaces_existing, int error);

// Writes a file of kiln's own (a compile-cache entry, a measured bandwidth): whatever is at
// `path`, a symbolic link included, is replaced by a new regular file through the same unguessable,
// exclusively created temporary file as write_file, and nothing is followed. Not flushed to disk:
// such files are checked when read, so one torn by a crash is a miss. Throws std::runtime_error.
void replace_own_file(const std::string& path, const void* data, std::size_t size);

// Creates the file `path` holding `size` bytes, readable and writable by its owner alone (0600
// whatever the umask), unless something (a file, a link, anything) is already there: then nothing
// is changed and false is returned. Written and flushed under an unguessable temporary name and
// linked into place, so a reader never sees it incomplete and of two processes creating it at
// once, exactly one succeeds. Throws std::runtime_error for any other failure.
bool create_private_file(const std::string& path, const void* data, std::size_t size);

// A file of kiln's own read back by read_own_file, with what fstat said of it.
struct own_file {
    std::string bytes;
    uid_t owner = 0;
    mode_t permissions = 0;  // st_mode & 07777
};
struct own_file_read {
    std::optional<own_file> file;  // the file's content, when it was read
    bool refused = false;          // something was at the path but was not read
};

// Reads a file of kiln's own (a cache entry, a measured bandwidth, FFTW's wisdom) found at a path
// that anyone able to write the folder could have put something else at. Whatever is not a
// regular file of at most `max_bytes` is refused without reading a byte: a symbolic link is not
// followed (O_NOFOLLOW), a FIFO cannot block the open (O_NONBLOCK), and fstat on the opened file
// rejects folders, FIFOs, devices and larger files, so nothing found there hangs the reader or
// makes it read without bound. Never throws for what it finds; a missing file is not refused.
own_file_read read_own_file(const std::string& path, std::size_t max_bytes);

// Writes all `size` bytes to the open descriptor `fd`, retrying short and interrupted writes.
// Throws std::runtime_error "writing <shown> failed: <reason>".
void write_stream(int fd, const void* data, std::size_t size, const std::string& shown,
                  const file_system_calls& calls = {});

}  // namespace kiln::detail
