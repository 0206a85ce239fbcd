// Reading JSON text and files, and atomic writes.
#include "madmax/file_io.hpp"

#include "madmax/error.hpp"

#include <sys/stat.h>
#include <signal.h>
#include <cstdlib>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unordered_set>
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

namespace {

/// The DOM builder of nlohmann's parser, with madmax's checks as the parser meets each token:
/// absurd depth, duplicate keys (which JSON parsers otherwise resolve silently, last one wins)
/// and integer literals too large for any integer type (quoted as written, not as 1e+20).
class StrictSax {
  public:
    StrictSax(json& out, const std::string& file) : dom_(out, true), file_(file) {}

    bool null() { return dom_.null(); }
    bool boolean(bool v) { return dom_.boolean(v); }
    bool number_integer(json::number_integer_t v) { return dom_.number_integer(v); }
    bool number_unsigned(json::number_unsigned_t v) { return dom_.number_unsigned(v); }
    bool number_float(json::number_float_t v, const std::string& lexeme) {
        // An integer literal (no '.', no exponent) only becomes a float when it overflows
        // 64 bits; no madmax field takes such a number.
        if (lexeme.find_first_of(".eE") == std::string::npos)
            throw InputError(file_, where(),
                             "integer " + lexeme +
                                 " is out of range: no field takes more than 2^53; use a "
                                 "smaller value");
        return dom_.number_float(v, lexeme);
    }
    bool string(std::string& v) { return dom_.string(v); }
    bool binary(json::binary_t& v) { return dom_.binary(v); }
    bool start_object(std::size_t n) {
        enter();
        keys_.emplace_back();
        return dom_.start_object(n);
    }
    bool key(std::string& k) {
        if (!keys_.empty() && !keys_.back().insert(k).second) // hashed: linear in the keys
            throw InputError(file_, k,
                             "duplicate key \"" + k +
                                 "\" in the same object; keep one (JSON would silently use "
                                 "the last)");
        path_ = k;
        return dom_.key(k);
    }
    bool end_object() {
        --depth_;
        if (!keys_.empty()) keys_.pop_back();
        return dom_.end_object();
    }
    bool start_array(std::size_t n) {
        enter();
        return dom_.start_array(n);
    }
    bool end_array() {
        --depth_;
        return dom_.end_array();
    }
    template <class Exception>
    bool parse_error(std::size_t pos, const std::string& token, const Exception& ex) {
        return dom_.parse_error(pos, token, ex); // throws ex
    }
    const std::string& path() const { return path_; }

  private:
    std::string where() const { return path_.empty() ? "(document)" : path_; }
    void enter() {
        if (++depth_ > kMaxJsonDepth)
            throw InputError(file_, where(),
                             "JSON nested more than " + std::to_string(kMaxJsonDepth) +
                                 " levels deep; no madmax file nests like that: name a madmax file");
    }
    nlohmann::detail::json_sax_dom_parser<json> dom_;
    const std::string& file_;
    std::vector<std::unordered_set<std::string>> keys_; // the keys of each open object
    std::string path_;                           // for messages: the innermost key seen
    std::size_t depth_ = 0;
};

} // namespace

json parseJsonText(const std::string& text, const std::string& file) {
    json out;
    StrictSax sax(out, file);
    try {
        json::sax_parse(text, &sax);
        return out;
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
        throw InputError(file, sax.path().empty() ? "(document)" : sax.path(),
                         "unreadable JSON value: " + what +
                             " (numbers must lie within ±1.8e308)");
    }
}

std::string readTextFile(const std::string& path) {
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
        throw InputError(path, "", "is a folder, not a file; name a file inside it");
    // A named pipe, device or socket would block or never end: madmax reads regular files only.
    if (!fs::is_regular_file(st))
        throw InputError(path, "",
                         "is not a regular file (a pipe, device or socket): save the input to a "
                         "file and name that");
    if (fs::file_size(path, ec) > kMaxInputBytes && !ec)
        throw InputError(path, "",
                         "more than " + std::to_string(kMaxInputBytes >> 20) +
                             " MiB, above the limit for any madmax input: name the input file itself");
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
                                 " MiB, above the limit for any madmax input (reading stopped there): name the input "
                                 "file itself");
    }
    if (in.bad()) throw InputError(path, "", "reading the file failed");
    return text;
}

json readJsonFile(const std::string& path) { return parseJsonText(readTextFile(path), path); }

std::optional<std::string> explainBadFileId(const std::string& id) {
    if (id.empty()) return "an id is needed";
    if (id.size() > 128) return "an id of at most 128 characters";
    if (id == "." || id == "..") return "\"" + id + "\" is not a file name";
    for (unsigned char ch : id)
        if (!(std::isalnum(ch) || ch == '.' || ch == '-' || ch == '_'))
            return "\"" + id + "\" is not a plain file name: letters, digits, '.', '-' and '_' "
                   "only (no path)";
    return std::nullopt;
}

namespace {
/// The temporary a save writes first: hidden beside the target, named for it and for the
/// writing process, so a save killed midway is recognised and removed by the next one.
std::string temporaryName(const std::string& file, unsigned salt) {
    return "." + file + ".madmax-tmp." + std::to_string(::getpid()) + "." + std::to_string(salt);
}

/// Temporaries of `file` left by a process that no longer runs (killed during a save).
void removeStaleTemporaries(const std::filesystem::path& dir, const std::string& file) {
    namespace fs = std::filesystem;
    const std::string prefix = "." + file + ".madmax-tmp.";
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind(prefix, 0) != 0) continue;
        const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
        if (pid > 0 && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH && it->is_regular_file(ec))
            fs::remove(it->path(), ec);
    }
}
} // namespace

void writeFileAtomically(const std::string& path, const std::string& contents) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    std::error_code ec;
    // Never replace something that is not a regular file (a device such as /dev/full, a folder,
    // a pipe): renaming over it would swap it for a regular file.
    const fs::file_status existing = fs::symlink_status(target, ec);
    if (!ec && fs::exists(existing) && !fs::is_regular_file(existing)) {
        if (fs::is_symlink(existing))
            throw InputError(path, "",
                             "will not replace it: it is a symbolic link; write to its target "
                             "instead");
        throw InputError(path, "",
                         "will not replace it: it is not a regular file (a device, folder or "
                         "pipe); name a file to write");
    }
    // A file the user made read-only stays as it is; one that exists keeps its permissions (a
    // 0600 file must not become world-readable by being saved).
    struct stat old {};
    const bool replacing = fs::exists(existing) && ::stat(target.c_str(), &old) == 0;
    if (replacing && ::access(target.c_str(), W_OK) != 0)
        throw InputError(path, "",
                         "will not replace it: it is read-only; make it writable (chmod u+w) or "
                         "save under another name");
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    removeStaleTemporaries(dir, target.filename().string());
    std::random_device rd;
    const fs::path tmp = dir / temporaryName(target.filename().string(), rd());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                          replacing ? (old.st_mode & 07777) : 0666); // new files: the umask's
    if (fd < 0)
        throw InputError(path, "",
                         "cannot write " + tmp.string() + ": " + std::strerror(errno) +
                             " (is the folder there and writable?); the file was left unchanged");
    if (replacing && ::fchmod(fd, old.st_mode & 07777) != 0) { // past the umask, exactly
        ::close(fd);
        fs::remove(tmp, ec);
        throw InputError(path, "", "cannot keep its permissions; the file was left unchanged");
    }
    auto fail = [&](const std::string& what) {
        const std::string reason = std::strerror(errno);
        ::close(fd);
        fs::remove(tmp, ec);
        throw InputError(path, "",
                         what + " " + tmp.string() + " failed (" + reason +
                             "; is the disk full?); the file was left unchanged");
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
        throw InputError(path, "",
                         "closing " + tmp.string() + " failed (" + reason +
                             "); the file was left unchanged");
    }
    fs::rename(tmp, target, ec);
    if (ec) {
        const std::string reason = ec.message();
        fs::remove(tmp, ec);
        throw InputError(path, "",
                         "cannot replace it: " + reason + "; the old file was left unchanged");
    }
}

} // namespace madmax
