// SPDX-License-Identifier: Apache-2.0
// Signed compile-cache entries: entries forged without the user's key are rebuilt, never handed
// to a driver; the key's file is private to the user and replaced when it is not; the keyed hash
// matches SipHash-2-4's reference vectors.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <kiln/kiln.hpp>
#include <map>
#include <string>
#include <vector>

#include "backend/fnv1a.hpp"
#include "cache_fixture.hpp"
#include "runtime/entry_signing.hpp"
#include "support/hang_guard.hpp"

namespace kiln::test::cache {
namespace {

std::uint64_t u64_at(const std::string& bytes, std::size_t at) {
    std::uint64_t value = 0;
    for (int i = 0; i < 8; ++i)
        value |= std::uint64_t(static_cast<unsigned char>(bytes.at(at + i))) << (8 * i);
    return value;
}

void append_u64(std::string& bytes, std::uint64_t value) {
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>(value >> (8 * i)));
}

// An entry is a magic (8 bytes), the key's size (8) and the key, the payload's size (8), a hash
// (8) and the payload, the device binary. Where the payload starts:
std::size_t payload_start(const std::string& entry) {
    return 8 + 8 + u64_at(entry, 8) + 8 + 8;
}

/// `entry` with its payload replaced by `payload` and made to agree with the size and hash before
/// it, as far as anyone can without the user's key: kiln's first format hashed the payload with
/// FNV-1a, unkeyed, and took any entry that this function forged.
std::string forged(const std::string& entry, const std::string& payload) {
    std::string forgery = entry.substr(0, payload_start(entry) - 16);
    append_u64(forgery, payload.size());
    append_u64(forgery, kiln::detail::fnv1a(payload.data(), payload.size()));
    return forgery + payload;
}

// Only what kiln wrote reaches the driver. PoCL asserted in pocl_binary_deserialize, or crashed,
// on a binary with three bytes flipped or cut short whose unkeyed checksum had been recomputed.
TEST_P(compile_cache, entries_forged_without_the_signing_key_are_rebuilt) {
    const auto source = fresh_source(12);
    (void)kiln::program(device(), source);
    const auto entry = only_entry(dir_.path());
    const auto good = read_bytes(entry);
    const auto binary = good.substr(payload_start(good));
    ASSERT_GT(binary.size(), 64u);
    auto flipped = binary;
    for (const std::size_t at : {binary.size() / 4, binary.size() / 2, 3 * binary.size() / 4})
        flipped[at] = static_cast<char>(flipped[at] ^ 0xff);
    const std::map<std::string, std::string> forgeries = {
        {"three bytes flipped", flipped},
        {"cut to half", binary.substr(0, binary.size() / 2)},
        {"cut to 8 bytes", binary.substr(0, 8)},
        {"as long, all 0x5a", std::string(binary.size(), '\x5a')},
        {"empty", ""},
    };
    for (const auto& [name, payload] : forgeries) {
        SCOPED_TRACE(name);
        write_bytes(entry, forged(good, payload));
        expect_rebuilt(device(), source, 12);
    }
    EXPECT_TRUE(loaded_from_disk(device(), source)) << "the rebuilt entry is kiln's again";
}

// The key is private to the user: nobody else can read it, so nobody else can sign an entry.
// Replaced by another key, it signs nothing written before; readable by others, it is no secret
// and is replaced. Either way every older entry is a miss.
TEST_P(compile_cache, the_signing_key_is_the_users_alone) {
    const auto source = fresh_source(13);
    (void)kiln::program(device(), source);
    const auto key_file = kiln::detail::signing_key_file(dir_.path());
    struct stat status {};
    ASSERT_EQ(::lstat(key_file.c_str(), &status), 0) << std::strerror(errno);
    EXPECT_TRUE(S_ISREG(status.st_mode));
    EXPECT_EQ(status.st_mode & 07777, 0600u);
    EXPECT_EQ(status.st_uid, ::geteuid());
    EXPECT_EQ(status.st_size, 16);

    const std::string other_key(16, 'k');
    write_bytes(key_file, other_key);  // still 0600 and the user's: trusted, and kept
    expect_rebuilt(device(), source, 13);
    EXPECT_EQ(read_bytes(key_file), other_key);
    EXPECT_TRUE(loaded_from_disk(device(), source));

    fs::permissions(key_file, fs::perms::group_read | fs::perms::others_read,
                    fs::perm_options::add);
    expect_rebuilt(device(), source, 13);
    ASSERT_EQ(::lstat(key_file.c_str(), &status), 0) << std::strerror(errno);
    EXPECT_EQ(status.st_mode & 07777, 0600u);
    EXPECT_NE(read_bytes(key_file), other_key);
    EXPECT_TRUE(loaded_from_disk(device(), source));
}

// The key's file is read as an entry is: not through a link, never waiting on a FIFO.
TEST_P(compile_cache, anything_but_a_private_file_at_the_signing_key_is_replaced) {
    const kiln::test::hang_guard guard(std::chrono::seconds(60));
    const auto key_file = kiln::detail::signing_key_file(dir_.path());
    const auto decoy = dir_.path() / "decoy";
    write_bytes(decoy, std::string(16, 'd'));
    fs::permissions(decoy, fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::replace);
    const std::map<std::string, std::function<void()>> plants = {
        {"a FIFO", [&] { ASSERT_EQ(::mkfifo(key_file.c_str(), 0600), 0) << std::strerror(errno); }},
        {"a link to /dev/zero", [&] { fs::create_symlink("/dev/zero", key_file); }},
        {"a link to a private file", [&] { fs::create_symlink(decoy, key_file); }},
    };
    int value = 14;
    for (const auto& [name, plant] : plants) {
        SCOPED_TRACE(name);
        const auto source = fresh_source(value);
        (void)kiln::program(device(), source);
        fs::remove(key_file);
        plant();
        expect_rebuilt(device(), source, value);
        EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(key_file)));
        EXPECT_TRUE(loaded_from_disk(device(), source));
        ++value;
    }
    EXPECT_EQ(read_bytes(decoy), std::string(16, 'd'));

    // A folder there cannot be removed: the disk cache is off, and nothing is read or stored.
    const auto source = fresh_source(value);
    fs::remove(key_file);
    fs::create_directory(key_file);
    const auto before = kiln::program_cache::stats();
    EXPECT_EQ(kiln::program(device(), source).origin(), kiln::program_origin::compiled);
    EXPECT_EQ(kiln::program_cache::stats().disk_write_failures, before.disk_write_failures + 1);
    EXPECT_FALSE(loaded_from_disk(device(), source));
}

// SipHash-2-4's reference vectors (its authors' vectors.h): key 00 01 .. 0f, message 00 01 ..
// of each length; a message added in pieces hashes as one.
TEST(keyed_hash, matches_the_siphash_2_4_reference_vectors) {
    const kiln::detail::signing_key key{0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
    std::vector<unsigned char> message(64);
    for (std::size_t i = 0; i < message.size(); ++i) message[i] = static_cast<unsigned char>(i);
    const std::map<std::size_t, std::uint64_t> expected = {
        {0, 0x726fdb47dd0e0e31ull},  {1, 0x74f839c593dc67fdull},  {7, 0xab0200f58b01d137ull},
        {8, 0x93f5f5799a932462ull},  {15, 0xa129ca6149be45e5ull}, {16, 0x3f2acc7f57c29bdbull},
        {63, 0x958a324ceb064572ull},
    };
    for (const auto& [length, hash] : expected)
        EXPECT_EQ(kiln::detail::keyed_hash(key).add(message.data(), length).finish(), hash)
            << length << " bytes";
    EXPECT_EQ(kiln::detail::keyed_hash(key)
                  .add(message.data(), 3)
                  .add(message.data() + 3, 20)
                  .add(message.data() + 23, 40)
                  .finish(),
              0x958a324ceb064572ull);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(compile_cache);

}  // namespace
}  // namespace kiln::test::cache
