// Plain-text tables for the command line's reports: a number in a printf format, a
// left-aligned column.
#pragma once

#include <cstdio>
#include <string>

namespace madmax::detail {

inline std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

/// `s` left-aligned in a column of `w`, always followed by a space (a longer label pushes its
/// value right rather than running into it).
inline std::string pad(std::string s, std::size_t w) {
    s.append(s.size() < w ? w - s.size() : 1, ' ');
    return s;
}

} // namespace madmax::detail
