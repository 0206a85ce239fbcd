// Reading JSON text and files, and atomic writes.
#include "madmax/file_io.hpp"

#include "madmax/error.hpp"

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace madmax {

using nlohmann::json;

json parseJsonText(const std::string& text, const std::string& file) {
    try {
        return json::parse(text);
    } catch (const json::parse_error& e) {
        // Turn the byte offset into line:column for humans.
        std::size_t line = 1, col = 1;
        for (std::size_t i = 0; i < e.byte && i < text.size(); ++i) {
            if (text[i] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        std::string what = e.what();
        const auto colon = what.find("syntax error");
        if (colon != std::string::npos) what = what.substr(colon);
        throw InputError(file, "",
                         "malformed JSON at line " + std::to_string(line) + ", column " +
                             std::to_string(col) + ": " + what);
    }
}

json readJsonFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(path, "", "cannot open the file (does it exist, and is it readable?)");
    std::ostringstream ss;
    ss << in.rdbuf();
    return parseJsonText(ss.str(), path);
}

void writeFileAtomically(const std::string& path, const std::string& contents) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::random_device rd;
    const fs::path tmp = dir / ("." + target.filename().string() + ".tmp" + std::to_string(rd()));
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out)
            throw std::runtime_error("cannot write " + tmp.string() + ": is the folder writable?");
        out << contents;
        out.flush();
        if (!out) {
            std::error_code ec;
            fs::remove(tmp, ec);
            throw std::runtime_error("writing " + tmp.string() + " failed (disk full?); " + path +
                                     " was left unchanged");
        }
    }
    std::error_code ec;
    fs::rename(tmp, target, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw std::runtime_error("cannot replace " + path + ": " + ec.message() +
                                 "; the old file was left unchanged");
    }
}

} // namespace madmax
