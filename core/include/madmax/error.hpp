// Errors in user input, as values a user can act on: the file, the JSON path, what to do.
#pragma once

#include <stdexcept>
#include <string>

namespace madmax {

class InputError : public std::runtime_error {
  public:
    InputError(std::string file, std::string path, const std::string& message)
        : std::runtime_error(compose(file, path, message)), file_(std::move(file)),
          path_(std::move(path)), message_(message) {}
    const std::string& file() const { return file_; }
    const std::string& path() const { return path_; }
    /// What is wrong and what to do, without the file and path.
    const std::string& message() const { return message_; }

  private:
    static std::string compose(const std::string& file, const std::string& path,
                               const std::string& message) {
        std::string out = file.empty() ? std::string("<input>") : file;
        if (!path.empty()) out += ": " + path;
        return out + ": " + message;
    }
    std::string file_, path_, message_;
};

} // namespace madmax
