// Small text helpers shared by the parsers (params, rules files) so that
// their error messages list and trim things the same way.
#pragma once

#include <cctype>
#include <string>
#include <vector>

namespace genx {

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

}  // namespace genx
