// Strict reading of JSON objects: every key known, every value typed and in range, and every
// error naming the file, the JSON path and what is allowed.
#pragma once

#include "madmax/error.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace madmax {

/// Closest candidate by edit distance, if it is close enough to be a plausible typo.
std::optional<std::string> didYouMean(const std::string& word,
                                      const std::vector<std::string>& candidates);

/// What a field accepts and its unit, as the strict parser checks it: published by the core so
/// that editors show exactly the rules the parser applies.
struct FieldInfo {
    std::string unit;    ///< e.g. "GB", "µs", "tokens"; empty when dimensionless
    std::string allowed; ///< e.g. "1 to 1048576", "> 0", "flash / unfused"
};
/// Fields by dotted JSON path ("system.tiers.0.gbps"), as `--set` and overrides name them.
using FieldCatalog = std::map<std::string, FieldInfo>;

/// While one of these is alive on a thread, every ObjectReader on that thread records what each
/// field it reads accepts into `catalog` (scoped: nothing is recorded outside it).
class FieldCatalogRecorder {
  public:
    explicit FieldCatalogRecorder(FieldCatalog& catalog);
    ~FieldCatalogRecorder();
    FieldCatalogRecorder(const FieldCatalogRecorder&) = delete;
    FieldCatalogRecorder& operator=(const FieldCatalogRecorder&) = delete;

  private:
    FieldCatalog* previous_;
};

/// The unit of the field at dotted path `path` (empty when it has none).
std::string fieldUnit(const std::string& path);

class ObjectReader {
  public:
    /// `path` is the JSON path of this object ("" for the document root).
    ObjectReader(const nlohmann::json& j, std::string file, std::string path);

    bool has(const std::string& key) const;            ///< present and not null
    const nlohmann::json& raw(const std::string& key); ///< marks the key known; must exist

    long long integer(const std::string& key, long long min, long long max);
    long long integer(const std::string& key, long long min, long long max, long long fallback);
    double number(const std::string& key, double min, double max, bool minExclusive = false);
    double number(const std::string& key, double min, double max, double fallback,
                  bool minExclusive = false);
    std::string string(const std::string& key);
    std::string string(const std::string& key, const std::string& fallback);
    bool boolean(const std::string& key, bool fallback);
    /// A string that must be one of `allowed`.
    std::string choice(const std::string& key, const std::vector<std::string>& allowed,
                       const std::string& fallback);
    /// Accept a key and ignore its value (informational fields such as notes).
    void ignore(const std::string& key);

    /// Fails on any key no getter asked for, suggesting the nearest known key.
    void finish();

    std::string pathOf(const std::string& key) const {
        return path_.empty() ? key : path_ + "." + key;
    }
    [[noreturn]] void fail(const std::string& key, const std::string& message) const;
    /// Record what `key` accepts in the active FieldCatalogRecorder's catalog, if any.
    void record(const std::string& key, const std::string& allowed) const;
    const std::string& file() const { return file_; }

  private:
    const nlohmann::json& require(const std::string& key);
    const nlohmann::json& j_;
    std::string file_, path_;
    std::vector<std::string> known_;
};

std::string describeType(const nlohmann::json& v);

/// "system.tiers[0].gbps" -> "system.tiers.0.gbps": the form overrides and --set use.
std::string dottedPath(const std::string& path);

/// The document's "schema" string; empty when it is not an object or the field is missing or
/// not a string (never throws: a file of the wrong kind must get a message, not an exception).
std::string schemaOf(const nlohmann::json& doc);

} // namespace madmax
