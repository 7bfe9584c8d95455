// SPDX-License-Identifier: Apache-2.0
// Writing a file so that a failure never loses or truncates what was there, and no file but the
// one named is touched: kiln's profile, its programs' output files (also those that several
// threads or processes write at offsets: file_replacement), and its own cache files; and reading
// those cache files back whatever is found at their paths.
#include "runtime/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <stdexcept>
#include <utility>

namespace kiln::detail {
namespace {

std::string quoted(const std::string& text) {
    return "'" + text + "'";
}

[[noreturn]] void fail(const std::string& problem, int error) {
    throw std::runtime_error(problem + ": " + std::strerror(error));
}

// The descriptor that `file` is an entry for in `descriptors`, this process's /proc/self/fd
// (as /dev/fd/2 is), or -1.
int descriptor_entry(const std::filesystem::path& file, const std::filesystem::path& descriptors) {
    const std::string name = file.filename().string();
    if (name.empty() || name.size() > 9 ||
        name.find_first_not_of("0123456789") != std::string::npos) {
        return -1;
    }
    std::error_code ignored;
    const std::filesystem::path folder = file.has_parent_path() ? file.parent_path() : ".";
    return std::filesystem::canonical(folder, ignored) == descriptors ? std::stoi(name) : -1;
}

// The open descriptor of this process that `path` names, directly or through symbolic links
// (/dev/stderr leads to /proc/self/fd/2), or -1. Such a name means the descriptor itself, not
// the file it happens to be open on: a standard error redirected to a file must get the bytes at
// its place in that file, not have the file replaced under it.
int named_descriptor(const std::string& path) {
    std::error_code no_proc;
    const std::filesystem::path descriptors = std::filesystem::canonical("/proc/self/fd", no_proc);
    if (no_proc) return -1;
    std::filesystem::path current(path);
    for (int hop = 0; hop < 40; ++hop) {  // as many links as the kernel follows (ELOOP)
        if (const int fd = descriptor_entry(current, descriptors); fd >= 0) return fd;
        struct stat link_status {};
        if (lstat(current.c_str(), &link_status) != 0 || !S_ISLNK(link_status.st_mode)) break;
        std::error_code unreadable;
        const std::filesystem::path target = std::filesystem::read_symlink(current, unreadable);
        if (unreadable) break;
        current = target.is_absolute() ? target : current.parent_path() / target;
    }
    return -1;
}

// Where the bytes of `path` would go, with symbolic links followed, so that replacing a file
// through a link replaces the file and keeps the link.
std::string resolve_links(const std::string& path) {
    struct stat link_status {};
    if (lstat(path.c_str(), &link_status) != 0 || !S_ISLNK(link_status.st_mode)) return path;
    const std::unique_ptr<char, decltype(&std::free)> resolved(realpath(path.c_str(), nullptr),
                                                               &std::free);
    if (resolved == nullptr) {
        if (errno == ENOENT) {
            throw std::runtime_error("cannot write " + quoted(path) +
                                     ": it is a symbolic link to a file that does not exist");
        }
        fail("cannot write " + quoted(path), errno);
    }
    return resolved.get();
}

// A new, empty file beside the one it will replace. Removed again unless it was renamed.
class temporary_file {
  public:
    // `mode` before the umask: a replacement starts private (0600) and gets the replaced
    // file's bits once written, so its bytes are never readable by more than the old file's.
    temporary_file(const std::string& target, mode_t mode, const std::string& shown) {
        const std::filesystem::path target_path(target);
        std::filesystem::path folder = target_path.parent_path();
        if (folder.empty()) folder = ".";
        // Hidden, and short enough for any file system even when the target's name is long.
        const std::string stem = target_path.filename().string().substr(0, 200);
        std::random_device entropy;
        for (int attempt = 0; attempt < 100; ++attempt) {
            char suffix[32];
            std::snprintf(suffix, sizeof suffix, ".%08x%08x.tmp", entropy(), entropy());
            path_ = (folder / ("." + stem + suffix)).string();
            // A name nobody can guess, created only if nothing is there, not even a link:
            // nothing planted in the folder is ever written through or renamed into place.
            fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
            if (fd_ >= 0 || errno != EEXIST) break;
        }
        if (fd_ < 0) {
            fail("cannot write " + shown + ": cannot create a file in " + quoted(folder.string()),
                 errno);
        }
    }
    temporary_file(const temporary_file&) = delete;
    temporary_file& operator=(const temporary_file&) = delete;
    ~temporary_file() {
        if (fd_ >= 0) close(fd_);
        if (!renamed_) unlink(path_.c_str());
    }

    int fd() const { return fd_; }
    const std::string& path() const { return path_; }

    // Returns 0, or the errno of a failed close.
    int close_file() {
        const int result = close(fd_);
        fd_ = -1;
        return result == 0 ? 0 : errno;
    }
    void mark_renamed() { renamed_ = true; }

  private:
    std::string path_;
    int fd_ = -1;
    bool renamed_ = false;
};

// Returns 0, or the errno of the write that failed.
int write_all(int fd, const void* data, std::size_t size, const file_system_calls& calls) {
    const auto* bytes = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t written = calls.write(fd, bytes, size);
        if (written < 0 && errno == EINTR) continue;
        if (written < 0) return errno;
        if (written == 0) return EIO;  // no progress and no reason: do not spin
        bytes += written;
        size -= static_cast<std::size_t>(written);
    }
    return 0;
}

// How far a replacement goes to survive a crash of the machine.
enum class durability {
    synced,   // the file and its folder are flushed to disk before and after the rename
    checked,  // not flushed: its reader checks what it reads, and a torn file is a miss
};

// An open descriptor, closed when it goes out of scope. Not detail::handle: the programs compile
// this file into themselves beside a shared libkiln, without kiln's headers (atomic_file.hpp).
class open_descriptor {
  public:
    explicit open_descriptor(int fd) : fd_(fd) {}
    open_descriptor(const open_descriptor&) = delete;
    open_descriptor& operator=(const open_descriptor&) = delete;
    ~open_descriptor() {
        if (fd_ >= 0) close(fd_);
    }
    int get() const { return fd_; }

  private:
    int fd_;
};

// A failed replacement's message, which ends with what became of the name: "writing 'x'
// failed: No space left on device; 'x' is unchanged".
std::string failure_text(const char* what, const std::string& shown, bool replaces_existing,
                         int error) {
    return std::string(what) + " " + shown + " failed: " + std::strerror(error) +
           (replaces_existing ? "; " + shown + " is unchanged" : "; no file was created");
}

}  // namespace

// A replacement under way: the temporary file beside its target, and what it replaces.
class file_replacement::state {
  public:
    // `existing`: the file replaced, or nullptr where nothing is there yet.
    state(const std::string& target, const struct stat* existing, const std::string& shown)
        : target_(target),
          shown_(shown),
          existing_(existing ? std::optional<struct stat>(*existing) : std::nullopt),
          // Without a file to copy the bits from, 0666 lets the umask decide, as for any new
          // file.
          temporary_(target, existing ? 0600 : 0666, shown) {}

    int fd() const { return temporary_.fd(); }
    const std::string& temporary_path() const { return temporary_.path(); }
    bool replaces_existing() const { return existing_.has_value(); }

    [[noreturn]] void failed(const char* what, int error) const {
        throw std::runtime_error(failure_text(what, shown_, replaces_existing(), error));
    }

    void write(const void* data, std::size_t size, const file_system_calls& calls) {
        if (const int error = write_all(fd(), data, size, calls)) failed("writing", error);
    }

    // Where the file system cannot reserve space (EOPNOTSUPP), a full disk shows in the writes
    // instead.
    void reserve(std::uint64_t size) {
        if (size == 0) return;
        int error = 0;
        do {
            error = fallocate(fd(), 0, 0, static_cast<off_t>(size)) == 0 ? 0 : errno;
        } while (error == EINTR);
        if (error != 0 && error != EOPNOTSUPP && error != ENOSYS) failed("writing", error);
    }

    void finish(const file_system_calls& calls, durability kept) {
        if (existing_) {
            // Owner and group first: changing them clears set-user-ID bits that fchmod then
            // restores. Only a privileged process may give a file away, so failing to is no
            // error.
            const bool owner_kept = fchown(fd(), existing_->st_uid, existing_->st_gid) == 0;
            if (!owner_kept && fchown(fd(), static_cast<uid_t>(-1), existing_->st_gid) != 0) {
                // Not even the group: the new file keeps the process's own, as any new file
                // does.
            }
            if (fchmod(fd(), existing_->st_mode & 07777) != 0) {
                failed("copying the permissions of", errno);
            }
        }
        if (kept == durability::synced && calls.fsync(fd()) != 0) failed("writing", errno);
        if (const int error = temporary_.close_file()) failed("writing", error);
        if (calls.rename(temporary_.path().c_str(), target_.c_str()) != 0) {
            failed("replacing", errno);
        }
        temporary_.mark_renamed();
        if (kept == durability::checked) return;
        // The rename is durable once the folder is on disk too; a folder that cannot be synced
        // (some file systems refuse) still holds the new file, so this is best effort.
        std::filesystem::path folder = std::filesystem::path(target_).parent_path();
        if (folder.empty()) folder = ".";
        const int folder_fd = open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (folder_fd >= 0) {
            (void)fsync(folder_fd);
            close(folder_fd);
        }
    }

  private:
    std::string target_;
    std::string shown_;
    std::optional<struct stat> existing_;
    temporary_file temporary_;
};

namespace {

void replace_file(const std::string& target, const struct stat* existing, const void* data,
                  std::size_t size, const std::string& shown, const file_system_calls& calls,
                  durability kept = durability::synced) {
    file_replacement::state replacement(target, existing, shown);
    replacement.write(data, size, calls);
    replacement.finish(calls, kept);
}

void stream_to_file(const std::string& target, const void* data, std::size_t size,
                    const std::string& shown, const file_system_calls& calls) {
    int fd = -1;
    do {
        // Neither O_CREAT nor O_TRUNC: the file exists and is not ours to reshape.
        fd = open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) fail("cannot open " + shown + " for writing", errno);
    try {
        write_stream(fd, data, size, shown, calls);
    } catch (...) {
        close(fd);
        throw;
    }
    if (close(fd) != 0) fail("writing " + shown + " failed", errno);
}

// Where write_file's bytes for `path` go: into a descriptor of this process that the name
// stands for, else into `file` (links followed), as a stream when something other than a
// regular file is there, else as a replacement (of `existing`, or where nothing is yet).
struct write_target {
    int descriptor = -1;
    std::string file;
    std::optional<struct stat> existing;
    bool streamed() const { return existing && !S_ISREG(existing->st_mode); }
};

write_target find_target(const std::string& path, const std::string& shown) {
    if (path.empty()) throw std::runtime_error("cannot write a file with an empty name");
    write_target target;
    target.descriptor = named_descriptor(path);
    if (target.descriptor >= 0) return target;
    target.file = resolve_links(path);
    struct stat status {};
    if (stat(target.file.c_str(), &status) != 0) {
        if (errno != ENOENT) fail("cannot write " + shown, errno);
        return target;
    }
    if (S_ISDIR(status.st_mode)) fail("cannot write " + shown, EISDIR);
    target.existing = status;
    if (!S_ISREG(status.st_mode)) return target;
    // Root may write any file, but one whose mode lets nobody write it says it is not to be
    // changed: replacing it through the folder would go around that.
    if ((status.st_mode & 0222) == 0) fail("cannot write " + shown, EACCES);
    if (access(target.file.c_str(), W_OK) != 0) fail("cannot write " + shown, errno);
    return target;
}

}  // namespace

delivery write_file(const std::string& path, const void* data, std::size_t size,
                    const file_system_calls& calls) {
    const std::string shown = quoted(path);
    const write_target target = find_target(path, shown);
    if (target.descriptor >= 0) {
        write_stream(target.descriptor, data, size, shown, calls);
        return delivery::streamed;
    }
    if (target.streamed()) {
        stream_to_file(target.file, data, size, shown, calls);
        return delivery::streamed;
    }
    replace_file(target.file, target.existing ? &*target.existing : nullptr, data, size, shown,
                 calls);
    return delivery::replaced;
}

file_replacement::file_replacement(std::unique_ptr<state> begun) : state_(std::move(begun)) {}
file_replacement::~file_replacement() = default;

std::unique_ptr<file_replacement> file_replacement::begin(const std::string& path,
                                                          std::uint64_t size) {
    const std::string shown = quoted(path);
    const write_target target = find_target(path, shown);
    if (target.descriptor >= 0 || target.streamed()) return nullptr;
    auto begun =
        std::make_unique<state>(target.file, target.existing ? &*target.existing : nullptr, shown);
    begun->reserve(size);
    return std::unique_ptr<file_replacement>(new file_replacement(std::move(begun)));
}

int file_replacement::fd() const {
    return state_->fd();
}
const std::string& file_replacement::temporary_path() const {
    return state_->temporary_path();
}
bool file_replacement::replaces_existing() const {
    return state_->replaces_existing();
}
void file_replacement::commit(const file_system_calls& calls) {
    state_->finish(calls, durability::synced);
}

int open_replacement_part(const std::string& temporary_path) {
    int fd = -1;
    do {
        fd = open(temporary_path.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

std::string replacement_failure(const std::string& path, bool replaces_existing, int error) {
    return failure_text("writing", quoted(path), replaces_existing, error);
}

void replace_own_file(const std::string& path, const void* data, std::size_t size) {
    if (path.empty()) throw std::runtime_error("cannot write a file with an empty name");
    replace_file(path, nullptr, data, size, quoted(path), {}, durability::checked);
}

bool create_private_file(const std::string& path, const void* data, std::size_t size) {
    if (path.empty()) throw std::runtime_error("cannot write a file with an empty name");
    const std::string failed = "creating " + quoted(path) + " failed";
    temporary_file temporary(path, 0600, quoted(path));
    // The umask may only take bits away, and 0600 was asked for: set it whatever the umask was.
    if (fchmod(temporary.fd(), 0600) != 0) fail(failed, errno);
    if (const int error = write_all(temporary.fd(), data, size, {})) fail(failed, error);
    if (fsync(temporary.fd()) != 0) fail(failed, errno);
    if (const int error = temporary.close_file()) fail(failed, error);
    // link, unlike rename, never replaces: the first of several creators wins, and the others
    // read its file. The temporary name is removed either way.
    if (link(temporary.path().c_str(), path.c_str()) == 0) return true;
    if (errno == EEXIST) return false;
    fail(failed, errno);
}

own_file_read read_own_file(const std::string& path, std::size_t max_bytes) {
    own_file_read result;
    int fd = -1;
    do {
        fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        result.refused = errno != ENOENT;
        return result;
    }
    const open_descriptor file(fd);
    result.refused = true;
    struct stat status {};
    if (fstat(file.get(), &status) != 0 || !S_ISREG(status.st_mode) || status.st_size < 0 ||
        static_cast<std::uintmax_t>(status.st_size) > max_bytes)
        return result;
    own_file content{std::string(static_cast<std::size_t>(status.st_size), '\0'), status.st_uid,
                     status.st_mode & 07777};
    std::size_t done = 0;
    while (done < content.bytes.size()) {
        const ssize_t got =
            read(file.get(), content.bytes.data() + done, content.bytes.size() - done);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return result;  // shrunk while read, or unreadable
        done += static_cast<std::size_t>(got);
    }
    result.refused = false;
    result.file = std::move(content);
    return result;
}

void write_stream(int fd, const void* data, std::size_t size, const std::string& shown,
                  const file_system_calls& calls) {
    if (const int error = write_all(fd, data, size, calls)) {
        fail("writing " + shown + " failed", error);
    }
}

}  // namespace kiln::detail
