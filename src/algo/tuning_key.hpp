// SPDX-License-Identifier: Apache-2.0
// Tuning keys: a tuning as text, the words that program keys and benchmarks print and that
// environment variables give back (KILN_REDUCE_TUNING, KILN_HISTOGRAM_TUNING, gemm_bench's
// KILN_GEMM_BENCH_*). A family lists its fields once, as a tuning_key_format; write_tuning_key and
// read_tuning_key take that one list, so that what a key prints is what it reads.
//
// A key is words apart by spaces: a name first where the family has one ("strided",
// "local_atomics"), then numbers, each a prefix and one or more values joined by 'x' ("g256",
// "t8x8", "128x128x16"), then flags, words there where they are true ("wide", "r4"). A family
// with a name splits it off with split_tuning_key and reads it with tuning_key_choice.
#pragma once

#include <array>
#include <cstddef>
#include <cstdlib>
#include <initializer_list>
#include <kiln/detail/algo/tuning.hpp>
#include <kiln/error.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::detail {

/// One number word: `prefix`, then the values of `members` joined by 'x' ("g256": prefix "g"
/// and one member; "t8x8": "t" and two; "128x128x16": no prefix, three).
template <class Tuning>
struct tuning_key_number {
    std::string_view prefix;
    /// Filled from the front; the members after the last are null.
    std::array<std::size_t Tuning::*, 3> members{};
    /// Whether 0 is a value (else a key with 0 there reads as no key).
    bool zero_allowed = false;
    /// Whether keys leave the word out where its values are all 0 (a field most tunings leave
    /// at 0, so that their keys stay as they were).
    bool left_out_at_zero = false;
};

/// A word that is there exactly where `member` is true.
template <class Tuning>
struct tuning_key_flag {
    std::string_view word;
    bool Tuning::*member = nullptr;
};

/// A family's key: its number words, then its flags, in the order the key prints them.
template <class Tuning>
struct tuning_key_format {
    std::span<const tuning_key_number<Tuning>> numbers;
    std::span<const tuning_key_flag<Tuning>> flags = {};
};

/// `prefix` and `values` joined by 'x': "t8x8".
std::string tuning_key_word(std::string_view prefix, std::span<const std::size_t> values);

/// A number word split into its prefix (up to the first digit) and its values; none where the
/// rest is not values joined by 'x' or a value overflows.
struct tuning_key_number_word {
    std::string_view prefix;
    std::vector<std::size_t> values;
};
std::optional<tuning_key_number_word> split_tuning_key_number(std::string_view word);

/// The words of `text`, apart by spaces.
std::vector<std::string_view> tuning_key_words(std::string_view text);

/// `key`'s first word (a family's name), and the words after it.
std::pair<std::string_view, std::string_view> split_tuning_key(std::string_view key);

/// The one of `choices` whose to_string is `word`, if any: a family's name word.
template <class Choice>
std::optional<Choice> tuning_key_choice(std::string_view word,
                                        std::initializer_list<Choice> choices) {
    for (const Choice choice : choices)
        if (to_string(choice) == word) return choice;
    return std::nullopt;
}

/// `name` (none where empty), then `tuning`'s words as `format` lists them:
/// "strided g256 p16 a4 w2", "128x128x16 t8x8 v4 r4".
template <class Tuning>
std::string write_tuning_key(std::string_view name, const Tuning& tuning,
                             const tuning_key_format<Tuning>& format) {
    std::string key(name);
    const auto add = [&](const std::string& word) { key += (key.empty() ? "" : " ") + word; };
    for (const tuning_key_number<Tuning>& number : format.numbers) {
        std::vector<std::size_t> values;
        bool all_zero = true;
        for (std::size_t Tuning::*member : number.members)
            if (member) {
                values.push_back(tuning.*member);
                all_zero = all_zero && tuning.*member == 0;
            }
        if (!(number.left_out_at_zero && all_zero)) add(tuning_key_word(number.prefix, values));
    }
    for (const tuning_key_flag<Tuning>& flag : format.flags)
        if (tuning.*flag.member) add(std::string(flag.word));
    return key;
}

/// `words` (a key less its name) read into `tuning` in any order: each number word sets its
/// members, those left out keep theirs; each flag is true where its word is there, else false.
/// False where a word is not one of `format`'s, has the wrong count of values, or a 0 where
/// none is allowed.
template <class Tuning>
bool read_tuning_key(std::string_view words, Tuning& tuning,
                     const tuning_key_format<Tuning>& format) {
    for (const tuning_key_flag<Tuning>& flag : format.flags) tuning.*flag.member = false;
    for (const std::string_view word : tuning_key_words(words)) {
        bool known = false;
        for (const tuning_key_flag<Tuning>& flag : format.flags)
            if (word == flag.word) known = tuning.*flag.member = true;
        if (known) continue;
        const std::optional<tuning_key_number_word> split = split_tuning_key_number(word);
        if (!split) return false;
        for (const tuning_key_number<Tuning>& number : format.numbers) {
            std::size_t count = 0;
            while (count < number.members.size() && number.members[count]) ++count;
            if (number.prefix != split->prefix || count != split->values.size()) continue;
            for (std::size_t i = 0; i < count; ++i) {
                if (split->values[i] == 0 && !number.zero_allowed) return false;
                tuning.*number.members[i] = split->values[i];
            }
            known = true;
        }
        if (!known) return false;
    }
    return true;
}

/// `key` read whole: its first word the one of `choices` that `name` takes, the words after it
/// as `format` lists them, over a default Tuning; none where either is not one.
template <class Tuning, class Choice>
std::optional<Tuning> read_named_tuning_key(std::string_view key, Choice Tuning::*name,
                                            std::initializer_list<Choice> choices,
                                            const tuning_key_format<Tuning>& format) {
    const auto [word, words] = split_tuning_key(key);
    const std::optional<Choice> chosen = tuning_key_choice(word, choices);
    if (!chosen) return std::nullopt;
    Tuning tuning;
    tuning.*name = *chosen;
    if (!read_tuning_key(words, tuning, format)) return std::nullopt;
    return tuning;
}

/// A test's or benchmark's tuning for `Family`: scoped_algorithm_policy's, else the key that the
/// environment variable `variable` holds, read by `read`, else none. A key `read` refuses is an
/// invalid_argument_error in `algorithm`'s name, which shows `example`, a key it takes.
template <tuning_family Family>
std::optional<typename Family::tuning> tuning_in_force(
    const char* variable, std::optional<typename Family::tuning> (*read)(std::string_view),
    const char* algorithm, const char* example) {
    if (std::optional<typename Family::tuning> forced = tuning_table<Family>::forced())
        return forced;
    const char* text = std::getenv(variable);
    if (!text || !*text) return std::nullopt;
    if (std::optional<typename Family::tuning> tuning = read(text)) return tuning;
    throw invalid_argument_error(algorithm, std::string(variable) + " is '" + text +
                                                "'; it takes a tuning as its key() writes it, "
                                                "such as '" +
                                                example + "'");
}

}  // namespace kiln::detail
