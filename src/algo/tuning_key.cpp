// SPDX-License-Identifier: Apache-2.0
// Tuning keys' words (tuning_key.hpp).
#include "algo/tuning_key.hpp"

#include <algorithm>
#include <charconv>

namespace kiln::detail {
namespace {

/// What separates words: spaces, and tabs or line ends from a shell's quoting.
constexpr std::string_view blanks = " \t\n";

}  // namespace

std::string tuning_key_word(std::string_view prefix, std::span<const std::size_t> values) {
    std::string word(prefix);
    for (std::size_t i = 0; i < values.size(); ++i)
        word += (i ? "x" : "") + std::to_string(values[i]);
    return word;
}

std::optional<tuning_key_number_word> split_tuning_key_number(std::string_view word) {
    const std::size_t digits = word.find_first_of("0123456789");
    if (digits == std::string_view::npos) return std::nullopt;
    tuning_key_number_word split{word.substr(0, digits), {}};
    const char* at = word.data() + digits;
    const char* const end = word.data() + word.size();
    while (true) {
        std::size_t value = 0;
        const auto [next, error] = std::from_chars(at, end, value);
        if (error != std::errc{} || next == at) return std::nullopt;
        split.values.push_back(value);
        if (next == end) return split;
        if (*next != 'x') return std::nullopt;
        at = next + 1;
    }
}

std::vector<std::string_view> tuning_key_words(std::string_view text) {
    std::vector<std::string_view> words;
    std::size_t at = 0;
    while ((at = text.find_first_not_of(blanks, at)) != std::string_view::npos) {
        const std::size_t end = std::min(text.find_first_of(blanks, at), text.size());
        words.push_back(text.substr(at, end - at));
        at = end;
    }
    return words;
}

std::pair<std::string_view, std::string_view> split_tuning_key(std::string_view key) {
    const std::size_t first = key.find_first_not_of(blanks);
    if (first == std::string_view::npos) return {};
    const std::size_t end = std::min(key.find_first_of(blanks, first), key.size());
    return {key.substr(first, end - first), key.substr(end)};
}

}  // namespace kiln::detail
