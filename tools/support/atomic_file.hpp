// Writing a program's output file so that a failure never loses or truncates what was there.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstddef>
#include <functional>
#include <string>

namespace kiln::programs {

// The system calls that move the bytes, so that a test can make one fail as a full disk does
// (ENOSPC) without root, a loop device or LD_PRELOAD. Programs use the defaults.
struct file_system_calls {
    std::function<ssize_t(int fd, const void* data, std::size_t size)> write = ::write;
    std::function<int(int fd)> fsync = ::fsync;
    std::function<int(const char* from, const char* to)> rename = ::rename;
};

// How write_file delivered the bytes.
enum class delivery {
    replaced,  // a temporary file renamed into place
    streamed,  // written into something that is not a regular file (a device, a FIFO)
};

// Writes `size` bytes to the file `path`.
// - A regular file, or a path where nothing exists yet, is replaced atomically: the bytes go to a
//   new temporary file in the same folder, which is flushed to disk (fsync) and renamed over
//   `path`; readers and a crash see the old content or the new, never a part. A replaced file
//   keeps its permission bits (and its owner and group where the process may set them); a new
//   file gets 0666 less the umask, as one the shell creates. A symbolic link is followed: the
//   file it names is replaced and the link stays. A file the process may not write is refused,
//   even when its folder would allow the rename.
// - Anything else that exists (a character device such as /dev/null, a FIFO, a terminal) is
//   opened for writing without creating or truncating it and written as a stream.
// On failure the temporary file is removed, nothing that existed is removed or changed (a stream
// may have taken part of the bytes), and std::runtime_error names the file and the reason, e.g.
// "writing 'heat.bmp' failed: No space left on device; 'heat.bmp' is unchanged".
delivery write_file(const std::string& path, const void* data, std::size_t size,
                    const file_system_calls& calls = {});

// Writes all `size` bytes to the open descriptor `fd`, retrying short and interrupted writes.
// Throws std::runtime_error "writing <shown> failed: <reason>".
void write_stream(int fd, const void* data, std::size_t size, const std::string& shown,
                  const file_system_calls& calls = {});

}  // namespace kiln::programs
