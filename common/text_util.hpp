// Small text helpers shared by the parsers (params, rules files) so that
// their error messages list and trim things the same way.
#pragma once

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace genx {

// The 1-based line of the byte before offset `byte` (a JSON parser's
// error position: it reports the byte after the one it stopped at).
inline int line_before_byte(const std::string& text, size_t byte) {
    const size_t upto = byte < text.size() ? byte : text.size();
    int line = 1;
    for (size_t i = 0; i + 1 < upto; ++i) line += text[i] == '\n';
    return line;
}

inline std::string trim(const std::string& s) {
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return s.substr(b, e - b);
}

// "a, b, c"; `if_empty` when there is nothing to list.
inline std::string join(const std::vector<std::string>& items, const std::string& if_empty = "") {
    std::string out;
    for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
    return out.empty() ? if_empty : out;
}

// Bytes with the largest exact binary suffix: 65536 -> "64K", 1000 ->
// "1000", SIZE_MAX (no limit) -> "inf".
inline std::string format_bytes(size_t v) {
    if (v == SIZE_MAX) return "inf";
    const char* const suffix[] = {"", "K", "M", "G"};
    int i = 0;
    while (i < 3 && v != 0 && v % 1024 == 0) {
        v /= 1024;
        ++i;
    }
    return std::to_string(v) + suffix[i];
}

// Seconds in the unit that reads best, three significant digits:
// "12.3 us", "1.23 ms", "4.56 s".
inline std::string format_seconds(double s) {
    char buf[32];
    if (s < 1e-3)
        std::snprintf(buf, sizeof buf, "%.3g us", s * 1e6);
    else if (s < 1)
        std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
    else
        std::snprintf(buf, sizeof buf, "%.3g s", s);
    return buf;
}

}  // namespace genx
