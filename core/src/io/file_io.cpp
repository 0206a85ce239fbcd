// Reading JSON text and files, and atomic writes.
#include "madmax/file_io.hpp"

#include "madmax/error.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace madmax {

using nlohmann::json;

namespace {

/// Deeper than any scenario, preset, validation or search file nests (they reach ~8 levels);
/// deeper input is refused before it can exhaust the stack of recursive JSON code.
constexpr std::size_t kMaxJsonDepth = 64;
/// Larger than any file of ours by far; a pipe or /dev/zero stops here instead of never ending.
constexpr std::size_t kMaxInputBytes = 64u << 20;

std::string lineColumn(const std::string& text, std::size_t byte) {
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            col = 1;
        } else {
            ++col;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

} // namespace

json parseJsonText(const std::string& text, const std::string& file) {
    // The callback sees every key and nesting level as the parser meets them: refuse absurd
    // depth and duplicate keys (which JSON parsers otherwise resolve silently, last one wins).
    std::vector<std::vector<std::string>> keys; // the keys of each open object
    std::string path;                           // for messages: the innermost key seen
    auto check = [&](int depth, json::parse_event_t event, json& parsed) {
        if (std::size_t(depth) > kMaxJsonDepth)
            throw InputError(file, path.empty() ? "(document)" : path,
                             "JSON nested more than " + std::to_string(kMaxJsonDepth) +
                                 " levels deep; no madmax file nests like that");
        switch (event) {
        case json::parse_event_t::object_start:
            keys.emplace_back();
            break;
        case json::parse_event_t::object_end:
            if (!keys.empty()) keys.pop_back();
            break;
        case json::parse_event_t::key: {
            const std::string k = parsed.get<std::string>();
            if (!keys.empty()) {
                auto& seen = keys.back();
                if (std::find(seen.begin(), seen.end(), k) != seen.end())
                    throw InputError(file, k,
                                     "duplicate key \"" + k +
                                         "\" in the same object; keep one (JSON would silently "
                                         "use the last)");
                seen.push_back(k);
            }
            path = k;
            break;
        }
        default:
            break;
        }
        return true;
    };
    try {
        return json::parse(text, check);
    } catch (const json::parse_error& e) {
        std::string what = e.what();
        const auto colon = what.find("syntax error");
        if (colon != std::string::npos) what = what.substr(colon);
        throw InputError(file, "",
                         "malformed JSON at " + lineColumn(text, e.byte) + ": " + what);
    } catch (const json::exception& e) {
        // e.g. out_of_range 406: a number beyond the double range, such as 1e400.
        std::string what = e.what();
        const auto bracket = what.find("] ");
        if (bracket != std::string::npos) what = what.substr(bracket + 2);
        throw InputError(file, path.empty() ? "(document)" : path,
                         "unreadable JSON value: " + what +
                             " (numbers must lie within ±1.8e308)");
    }
}

json readJsonFile(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec) {
        if (ec == std::errc::too_many_symbolic_link_levels)
            throw InputError(path, "", "a loop of symbolic links; point it at a real file");
        throw InputError(path, "",
                         "cannot open the file: " + ec.message() +
                             " (does it exist, and is it readable?)");
    }
    if (fs::is_directory(st))
        throw InputError(path, "", "is a folder, not a file; name a JSON file inside it");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(path, "", "cannot open the file (does it exist, and is it readable?)");
    std::string text;
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        text.append(buf, std::size_t(in.gcount()));
        if (text.size() > kMaxInputBytes)
            throw InputError(path, "",
                             "more than " + std::to_string(kMaxInputBytes >> 20) +
                                 " MiB: not a madmax JSON file (reading stopped there)");
    }
    if (in.bad()) throw InputError(path, "", "reading the file failed");
    return parseJsonText(text, path);
}

void writeFileAtomically(const std::string& path, const std::string& contents) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    std::error_code ec;
    // Never replace something that is not a regular file (a device such as /dev/full, a folder,
    // a pipe): renaming over it would swap it for a regular file.
    const fs::file_status existing = fs::symlink_status(target, ec);
    if (!ec && fs::exists(existing) && !fs::is_regular_file(existing)) {
        if (fs::is_symlink(existing))
            throw std::runtime_error("will not replace " + path +
                                     ": it is a symbolic link; write to its target instead");
        throw std::runtime_error("will not replace " + path +
                                 ": it is not a regular file (a device, folder or pipe)");
    }
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::random_device rd;
    const fs::path tmp = dir / ("." + target.filename().string() + ".tmp" + std::to_string(rd()));
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        throw std::runtime_error("cannot write " + tmp.string() + ": " + std::strerror(errno) +
                                 "; " + path + " was left unchanged");
    auto fail = [&](const std::string& what) {
        const std::string reason = std::strerror(errno);
        ::close(fd);
        fs::remove(tmp, ec);
        throw std::runtime_error(what + " " + tmp.string() + " failed (" + reason + "); " + path +
                                 " was left unchanged");
    };
    // Every write checked, then fsync: a full disk is reported here, not discovered later.
    std::size_t done = 0;
    while (done < contents.size()) {
        const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail("writing");
        }
        done += std::size_t(n);
    }
    if (::fsync(fd) != 0) fail("flushing");
    if (::close(fd) != 0) {
        const std::string reason = std::strerror(errno);
        fs::remove(tmp, ec);
        throw std::runtime_error("closing " + tmp.string() + " failed (" + reason + "); " + path +
                                 " was left unchanged");
    }
    fs::rename(tmp, target, ec);
    if (ec) {
        const std::string reason = ec.message();
        fs::remove(tmp, ec);
        throw std::runtime_error("cannot replace " + path + ": " + reason +
                                 "; the old file was left unchanged");
    }
}

} // namespace madmax
