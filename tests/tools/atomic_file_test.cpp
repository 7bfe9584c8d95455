// SPDX-License-Identifier: Apache-2.0
// Tests of write_file and file_replacement: a file is replaced whole or not at all, and devices
// and FIFOs get a stream.
#include "atomic_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "support/scratch_folder.hpp"

namespace kiln::programs {
namespace {

namespace fs = std::filesystem;

class atomic_file : public testing::Test {
  protected:
    std::string path(const std::string& name) const { return folder_.path(name); }
    std::set<std::string> folder_entries() const { return folder_.entries(); }

    kiln::test::scratch_folder folder_{"kiln-atomic-file"};
};

std::string contents(const std::string& path) {
    return kiln::test::file_contents(path);
}

void create(const std::string& path, const std::string& text, mode_t mode) {
    std::ofstream(path, std::ios::binary) << text;
    ASSERT_EQ(chmod(path.c_str(), mode), 0);
}

struct stat status_of(const std::string& path) {
    struct stat status {};
    EXPECT_EQ(lstat(path.c_str(), &status), 0) << path;
    return status;
}

mode_t current_umask() {
    const mode_t mask = umask(0);
    umask(mask);
    return mask;
}

// Calls whose write takes `accepted` bytes and then fails as a full disk does.
file_system_calls disk_full_after(std::size_t accepted) {
    file_system_calls calls;
    auto left = std::make_shared<std::size_t>(accepted);
    calls.write = [left](int fd, const void* data, std::size_t size) -> ssize_t {
        if (*left == 0) {
            errno = ENOSPC;
            return -1;
        }
        const std::size_t now = std::min(size, *left);
        *left -= now;
        return ::write(fd, data, now);
    };
    return calls;
}

// Runs `write` and returns the message of the std::runtime_error it must throw.
template <class Write>
std::string failure_of(Write&& write) {
    try {
        write();
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    ADD_FAILURE() << "no error";
    return {};
}

const std::string new_text = "the new picture, longer than the old one";

TEST_F(atomic_file, creates_a_new_file_with_the_umasks_permissions) {
    const std::string target = path("new.bmp");
    EXPECT_EQ(write_file(target, new_text.data(), new_text.size()), delivery::replaced);
    EXPECT_EQ(contents(target), new_text);
    EXPECT_EQ(status_of(target).st_mode & 07777, 0666 & ~current_umask());
    EXPECT_EQ(folder_entries(), std::set<std::string>{"new.bmp"});
}

TEST_F(atomic_file, replaces_a_file_by_renaming_and_keeps_its_permissions) {
    const std::string target = path("old.bmp");
    create(target, "old", 0640);
    const ino_t old_inode = status_of(target).st_ino;
    EXPECT_EQ(write_file(target, new_text.data(), new_text.size()), delivery::replaced);
    EXPECT_EQ(contents(target), new_text);
    // A new inode: the old file was never opened for writing, so never truncated.
    EXPECT_NE(status_of(target).st_ino, old_inode);
    EXPECT_EQ(status_of(target).st_mode & 07777, 0640);
    EXPECT_EQ(folder_entries(), std::set<std::string>{"old.bmp"});
}

TEST_F(atomic_file, a_full_disk_leaves_the_old_file_byte_for_byte_and_no_temporary) {
    const std::string target = path("old.bmp");
    const std::string old_text(100000, 'x');
    create(target, old_text, 0644);
    for (std::size_t accepted : {std::size_t{0}, std::size_t{7}}) {
        const std::string message = failure_of([&] {
            write_file(target, new_text.data(), new_text.size(), disk_full_after(accepted));
        });
        EXPECT_NE(message.find("writing '" + target + "' failed: No space left on device"),
                  std::string::npos)
            << message;
        EXPECT_NE(message.find("is unchanged"), std::string::npos) << message;
        EXPECT_EQ(contents(target), old_text);
        EXPECT_EQ(folder_entries(), std::set<std::string>{"old.bmp"});
    }
}

TEST_F(atomic_file, a_failed_fsync_or_rename_leaves_the_old_file_and_no_temporary) {
    const std::string target = path("old.bmp");
    create(target, "old", 0644);
    file_system_calls failing_fsync;
    failing_fsync.fsync = [](int) {
        errno = EIO;
        return -1;
    };
    file_system_calls failing_rename;
    failing_rename.rename = [](const char*, const char*) {
        errno = EXDEV;
        return -1;
    };
    for (const file_system_calls& calls : {failing_fsync, failing_rename}) {
        const std::string message =
            failure_of([&] { write_file(target, new_text.data(), new_text.size(), calls); });
        EXPECT_NE(message.find("is unchanged"), std::string::npos) << message;
        EXPECT_EQ(contents(target), "old");
        EXPECT_EQ(folder_entries(), std::set<std::string>{"old.bmp"});
    }
}

TEST_F(atomic_file, a_full_disk_creates_no_file_where_there_was_none) {
    const std::string target = path("new.bmp");
    const std::string message = failure_of(
        [&] { write_file(target, new_text.data(), new_text.size(), disk_full_after(3)); });
    EXPECT_NE(message.find("no file was created"), std::string::npos) << message;
    EXPECT_TRUE(folder_entries().empty());
}

TEST_F(atomic_file, writes_through_a_symbolic_link_and_keeps_the_link) {
    create(path("real.bmp"), "old", 0600);
    fs::create_symlink("real.bmp", path("link.bmp"));
    write_file(path("link.bmp"), new_text.data(), new_text.size());
    EXPECT_TRUE(fs::is_symlink(path("link.bmp")));
    EXPECT_EQ(contents(path("real.bmp")), new_text);
    EXPECT_EQ(status_of(path("real.bmp")).st_mode & 07777, 0600);
    EXPECT_EQ(folder_entries(), (std::set<std::string>{"link.bmp", "real.bmp"}));
}

// kiln's own files (cache entries) never follow what is at their name: a link planted there is
// replaced by the file, and what it pointed to stays as it was.
TEST_F(atomic_file, an_own_file_replaces_a_link_at_its_name_and_leaves_its_target) {
    create(path("precious"), "precious", 0600);
    fs::create_symlink("precious", path("entry"));
    kiln::detail::replace_own_file(path("entry"), new_text.data(), new_text.size());
    EXPECT_FALSE(fs::is_symlink(path("entry")));
    EXPECT_EQ(contents(path("entry")), new_text);
    EXPECT_EQ(contents(path("precious")), "precious");
    EXPECT_EQ(folder_entries(), (std::set<std::string>{"entry", "precious"}));
}

// The compile cache's signing key is created so: private whatever the umask, and of processes
// creating it at once the first wins, while the others change nothing.
TEST_F(atomic_file, a_private_file_is_created_0600_and_replaces_nothing) {
    const mode_t umask_before = umask(0);
    const bool created = kiln::detail::create_private_file(path("key"), "secret", 6);
    umask(umask_before);
    EXPECT_TRUE(created);
    EXPECT_EQ(status_of(path("key")).st_mode & 07777, 0600);
    EXPECT_EQ(contents(path("key")), "secret");
    EXPECT_FALSE(kiln::detail::create_private_file(path("key"), "other!", 6));
    EXPECT_EQ(contents(path("key")), "secret");
    fs::create_symlink("missing", path("link"));
    EXPECT_FALSE(kiln::detail::create_private_file(path("link"), "x", 1));
    EXPECT_TRUE(fs::is_symlink(path("link")));
    EXPECT_EQ(folder_entries(), (std::set<std::string>{"key", "link"}));
}

// What sits at the path of one of kiln's own files is read only when it is a regular file within
// the cap: a FIFO is refused without waiting for a writer, a link without following it.
TEST_F(atomic_file, an_own_file_is_read_only_when_regular_and_within_its_cap) {
    create(path("entry"), "0123456789", 0640);
    const auto read = kiln::detail::read_own_file(path("entry"), 10);
    ASSERT_TRUE(read.file);
    EXPECT_FALSE(read.refused);
    EXPECT_EQ(read.file->bytes, "0123456789");
    EXPECT_EQ(read.file->permissions, 0640u);
    EXPECT_EQ(read.file->owner, geteuid());
    const auto missing = kiln::detail::read_own_file(path("missing"), 10);
    EXPECT_FALSE(missing.file);
    EXPECT_FALSE(missing.refused);
    ASSERT_EQ(mkfifo(path("fifo").c_str(), 0600), 0);
    fs::create_symlink("entry", path("link"));
    fs::create_directory(path("folder"));
    for (const auto& [name, cap] : {std::pair<std::string, std::size_t>{"entry", 9},
                                    {"fifo", 10},
                                    {"link", 10},
                                    {"folder", 10}}) {
        const auto refused = kiln::detail::read_own_file(path(name), cap);
        EXPECT_FALSE(refused.file) << name;
        EXPECT_TRUE(refused.refused) << name;
    }
}

TEST_F(atomic_file, refuses_a_dangling_link_a_folder_and_an_empty_name) {
    fs::create_symlink("missing.bmp", path("dangling.bmp"));
    EXPECT_NE(failure_of([&] {
                  write_file(path("dangling.bmp"), "x", 1);
              }).find("symbolic link to a file that does not exist"),
              std::string::npos);
    fs::create_directory(path("folder"));
    EXPECT_NE(failure_of([&] { write_file(path("folder"), "x", 1); }).find("Is a directory"),
              std::string::npos);
    EXPECT_FALSE(failure_of([&] { write_file("", "x", 1); }).empty());
    EXPECT_EQ(folder_entries(), (std::set<std::string>{"dangling.bmp", "folder"}));
    EXPECT_TRUE(fs::is_directory(path("folder")));
}

// Refused whoever runs the program: root, who may write anything, still keeps a file marked
// read-only rather than replacing it through the folder.
TEST_F(atomic_file, refuses_to_replace_a_file_it_may_not_write) {
    create(path("read_only.bmp"), "old", 0444);
    const ino_t inode = status_of(path("read_only.bmp")).st_ino;
    EXPECT_NE(
        failure_of([&] { write_file(path("read_only.bmp"), "x", 1); }).find("Permission denied"),
        std::string::npos);
    EXPECT_EQ(contents(path("read_only.bmp")), "old");
    EXPECT_EQ(status_of(path("read_only.bmp")).st_ino, inode);
    EXPECT_EQ(status_of(path("read_only.bmp")).st_mode & 07777, 0444u);
    EXPECT_EQ(folder_entries(), std::set<std::string>{"read_only.bmp"});
}

// /dev/stderr and its kind (/dev/fd/N, /proc/self/fd/N) name a descriptor the program has open:
// the bytes go into that descriptor, after what it already took, whatever it is; a link to one
// stays a link. Replacing the file behind it lost what the program wrote there before and after.
TEST_F(atomic_file, writes_into_an_open_descriptor_named_through_a_link) {
    const std::string log = path("log.txt");
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    ASSERT_EQ(write(fd, "before ", 7), 7);
    fs::create_symlink("/proc/self/fd/" + std::to_string(fd), path("stream"));
    EXPECT_EQ(write_file(path("stream"), new_text.data(), new_text.size()), delivery::streamed);
    EXPECT_EQ(write(fd, " after", 6), 6);
    close(fd);
    EXPECT_EQ(contents(log), "before " + new_text + " after");
    EXPECT_TRUE(fs::is_symlink(path("stream")));
    EXPECT_EQ(folder_entries(), (std::set<std::string>{"log.txt", "stream"}));

    // A pipe, which no path names at all.
    int ends[2];
    ASSERT_EQ(pipe(ends), 0);
    const std::string named = "/dev/fd/" + std::to_string(ends[1]);
    EXPECT_EQ(write_file(named, new_text.data(), new_text.size()), delivery::streamed);
    close(ends[1]);
    std::string received(new_text.size() + 1, '\0');
    const ssize_t got = read(ends[0], received.data(), received.size());
    close(ends[0]);
    ASSERT_EQ(got, static_cast<ssize_t>(new_text.size()));
    EXPECT_EQ(received.substr(0, new_text.size()), new_text);
}

TEST_F(atomic_file, a_device_that_is_full_is_an_error_and_is_not_removed) {
    // Through a link, so that not even a root run of a broken writer could remove /dev/full.
    fs::create_symlink("/dev/full", path("full.bmp"));
    const std::string message =
        failure_of([&] { write_file(path("full.bmp"), new_text.data(), new_text.size()); });
    EXPECT_NE(message.find("No space left on device"), std::string::npos) << message;
    EXPECT_TRUE(fs::is_symlink(path("full.bmp")));
    EXPECT_TRUE(fs::is_character_file("/dev/full"));
    EXPECT_EQ(folder_entries(), std::set<std::string>{"full.bmp"});
}

TEST_F(atomic_file, streams_into_a_device_without_replacing_it) {
    EXPECT_EQ(write_file("/dev/null", new_text.data(), new_text.size()), delivery::streamed);
    EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST_F(atomic_file, streams_into_a_fifo) {
    const std::string fifo = path("picture.fifo");
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    std::string received;
    std::thread reader([&] { received = contents(fifo); });
    const delivery how = write_file(fifo, new_text.data(), new_text.size());
    reader.join();
    EXPECT_EQ(how, delivery::streamed);
    EXPECT_EQ(received, new_text);
    EXPECT_TRUE(fs::is_fifo(fifo));
    EXPECT_EQ(folder_entries(), std::set<std::string>{"picture.fifo"});
}

// A replacement written at offsets, here through a second descriptor as another process would
// write its share (open_replacement_part), replaces the file on commit and keeps its
// permissions; destroyed uncommitted, it leaves the old file and no temporary.
TEST_F(atomic_file, a_replacement_written_at_offsets_replaces_the_file_on_commit) {
    const std::string target = path("old.bin");
    create(target, "old", 0640);
    for (const bool committed : {false, true}) {
        auto replacement = file_replacement::begin(target, new_text.size());
        ASSERT_TRUE(replacement);
        EXPECT_TRUE(replacement->replaces_existing());
        EXPECT_EQ(fs::file_size(replacement->temporary_path()), new_text.size());  // reserved
        const int part = open_replacement_part(replacement->temporary_path());
        ASSERT_GE(part, 0) << std::strerror(errno);
        const std::size_t half = new_text.size() / 2;
        ASSERT_EQ(pwrite(part, new_text.data() + half, new_text.size() - half, half),
                  static_cast<ssize_t>(new_text.size() - half));
        close(part);
        ASSERT_EQ(pwrite(replacement->fd(), new_text.data(), half, 0), static_cast<ssize_t>(half));
        if (committed) replacement->commit();
        replacement.reset();
        EXPECT_EQ(contents(target), committed ? new_text : "old");
        EXPECT_EQ(folder_entries(), std::set<std::string>{"old.bin"});
    }
    EXPECT_EQ(status_of(target).st_mode & 07777, 0640);
    // Never a file of its own making: the part opens only what exists, and no link.
    EXPECT_LT(open_replacement_part(path("missing")), 0);
    fs::create_symlink("old.bin", path("link"));
    EXPECT_LT(open_replacement_part(path("link")), 0);
}

// begin() refuses what write_file refuses, and gives nothing to replace where write_file would
// stream.
TEST_F(atomic_file, a_replacement_is_begun_only_where_write_file_would_replace) {
    create(path("read_only.bin"), "old", 0444);
    EXPECT_NE(failure_of([&] {
                  file_replacement::begin(path("read_only.bin"), 1);
              }).find("cannot write '" + path("read_only.bin") + "': Permission denied"),
              std::string::npos);
    EXPECT_NE(failure_of([&] {
                  file_replacement::begin(path("no/such/folder.bin"), 1);
              }).find("cannot create a file in"),
              std::string::npos);
    EXPECT_FALSE(file_replacement::begin("/dev/null", 1));
    EXPECT_EQ(folder_entries(), std::set<std::string>{"read_only.bin"});
    EXPECT_EQ(replacement_failure("x.bin", false, ENOSPC),
              "writing 'x.bin' failed: No space left on device; no file was created");
}

// The space is reserved when the replacement begins, so that a disk that cannot hold the file
// fails before any byte is written: here a file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) that
// the reservation passes.
TEST_F(atomic_file, a_replacement_too_large_for_the_disk_fails_when_it_begins) {
    const std::string target = path("old.bin");
    create(target, "old", 0644);
    struct rlimit before {};
    ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &before), 0);
    struct rlimit small = before;
    small.rlim_cur = 4096;
    const auto signal_before = std::signal(SIGXFSZ, SIG_IGN);
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
    const std::string message =
        failure_of([&] { file_replacement::begin(target, std::uint64_t{1} << 20); });
    setrlimit(RLIMIT_FSIZE, &before);
    std::signal(SIGXFSZ, signal_before);
    EXPECT_EQ(message,
              "writing '" + target + "' failed: File too large; '" + target + "' is unchanged");
    EXPECT_EQ(contents(target), "old");
    EXPECT_EQ(folder_entries(), std::set<std::string>{"old.bin"});
}

TEST_F(atomic_file, write_stream_finishes_short_and_interrupted_writes) {
    int pipe_ends[2];
    ASSERT_EQ(pipe(pipe_ends), 0);
    file_system_calls calls;
    auto interrupted = std::make_shared<bool>(false);
    calls.write = [interrupted](int fd, const void* data, std::size_t size) -> ssize_t {
        *interrupted = !*interrupted;
        if (*interrupted) {
            errno = EINTR;
            return -1;
        }
        return ::write(fd, data, std::min<std::size_t>(size, 3));
    };
    write_stream(pipe_ends[1], new_text.data(), new_text.size(), "the pipe", calls);
    close(pipe_ends[1]);
    std::string received(new_text.size() + 1, '\0');
    const ssize_t got = read(pipe_ends[0], received.data(), received.size());
    close(pipe_ends[0]);
    ASSERT_EQ(got, static_cast<ssize_t>(new_text.size()));
    EXPECT_EQ(received.substr(0, new_text.size()), new_text);
}

}  // namespace
}  // namespace kiln::programs
