#include "madmax/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace madmax {

namespace {

std::size_t editDistance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

std::string formatNumber(double v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

thread_local FieldCatalog* activeCatalog = nullptr;

std::string rangeText(const std::string& min, const std::string& max, bool minExclusive) {
    return (minExclusive ? "> " : "") + (minExclusive ? min : min + " to ") +
           (minExclusive ? ", ≤ " + max : max);
}

} // namespace

FieldCatalogRecorder::FieldCatalogRecorder(FieldCatalog& catalog) : previous_(activeCatalog) {
    activeCatalog = &catalog;
}
FieldCatalogRecorder::~FieldCatalogRecorder() {
    activeCatalog = previous_;
}

std::string fieldUnit(const std::string& path) {
    const std::string key = path.substr(path.rfind('.') == std::string::npos ? 0 : path.rfind('.') + 1);
    auto ends = [&](const char* suffix) {
        const std::string s(suffix);
        return key.size() >= s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0;
    };
    if (path.find("peak_tflops") != std::string::npos) return "TFLOP/s (dense)";
    if (ends("_gb")) return "GB";
    if (ends("_tbps")) return "TB/s";
    if (key == "gbps") return "GB/s per GPU per direction";
    if (ends("_us")) return "µs";
    if (ends("_s")) return "s";
    if (ends("_mb")) return "MB";
    if (ends("_w")) return "W";
    if (key == "gpus" || key == "gpus_per_node") return "GPUs";
    if (key.find("efficiency") != std::string::npos) return "fraction (0–1]";
    if (key == "seq_len" || key == "max_seq_len" || ends("_tokens")) return "tokens";
    if (key == "global_batch" || key == "micro_batch" || key == "batch") return "sequences";
    if (key == "price_per_gpu_hour") return "$ per GPU-hour";
    return {};
}

void ObjectReader::record(const std::string& key, const std::string& allowed) const {
    if (!activeCatalog) return;
    const std::string path = dottedPath(pathOf(key));
    FieldInfo& info = (*activeCatalog)[path];
    info.unit = fieldUnit(path);
    info.allowed = allowed;
}

std::optional<std::string> didYouMean(const std::string& word,
                                      const std::vector<std::string>& candidates) {
    std::optional<std::string> best;
    std::size_t bestD = std::max<std::size_t>(2, word.size() / 3) + 1;
    for (const auto& c : candidates) {
        const std::size_t d = editDistance(word, c);
        if (d < bestD) {
            bestD = d;
            best = c;
        }
    }
    return best;
}

std::string schemaOf(const nlohmann::json& doc) {
    if (!doc.is_object()) return {};
    const auto it = doc.find("schema");
    return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string dottedPath(const std::string& path) {
    std::string out;
    out.reserve(path.size());
    for (char c : path) {
        if (c == '[')
            out += '.';
        else if (c != ']')
            out += c;
    }
    return out;
}

std::string describeType(const nlohmann::json& v) {
    if (v.is_null()) return "null";
    if (v.is_boolean()) return std::string("boolean ") + (v.get<bool>() ? "true" : "false");
    if (v.is_number_integer() || v.is_number_unsigned()) return "integer " + v.dump();
    if (v.is_number()) return "number " + v.dump();
    if (v.is_string()) return "string " + v.dump();
    if (v.is_array()) return "an array";
    return "an object";
}

ObjectReader::ObjectReader(const nlohmann::json& j, std::string file, std::string path)
    : j_(j), file_(std::move(file)), path_(std::move(path)) {
    if (!j_.is_object())
        throw InputError(file_, path_.empty() ? "(document)" : path_,
                         "expected a JSON object, got " + describeType(j_));
}

void ObjectReader::fail(const std::string& key, const std::string& message) const {
    throw InputError(file_, key.empty() ? path_ : pathOf(key), message);
}

bool ObjectReader::has(const std::string& key) const {
    auto it = j_.find(key);
    return it != j_.end() && !it->is_null();
}

const nlohmann::json& ObjectReader::require(const std::string& key) {
    known_.push_back(key);
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) fail(key, "required field is missing");
    return *it;
}

const nlohmann::json& ObjectReader::raw(const std::string& key) {
    return require(key);
}

void ObjectReader::ignore(const std::string& key) {
    known_.push_back(key);
}

long long ObjectReader::integer(const std::string& key, long long min, long long max) {
    record(key, "integer, " + rangeText(std::to_string(min), std::to_string(max), false));
    const auto& v = require(key);
    if (!v.is_number_integer() && !v.is_number_unsigned()) {
        if (v.is_number() && std::floor(v.get<double>()) == v.get<double>() &&
            std::fabs(v.get<double>()) < 9e15) {
            // 8.0 is an integer in JSON's eyes too.
        } else {
            fail(key, "expected an integer from " + std::to_string(min) + " to " +
                          std::to_string(max) + ", got " + describeType(v));
        }
    }
    const double d = v.get<double>();
    if (d < double(min) || d > double(max))
        fail(key, "value " + v.dump() + " is out of range; allowed: " + std::to_string(min) +
                      " to " + std::to_string(max));
    return static_cast<long long>(d);
}

long long ObjectReader::integer(const std::string& key, long long min, long long max,
                                long long fallback) {
    record(key, "integer, " + rangeText(std::to_string(min), std::to_string(max), false));
    if (!has(key)) {
        known_.push_back(key);
        return fallback;
    }
    return integer(key, min, max);
}

double ObjectReader::number(const std::string& key, double min, double max, bool minExclusive) {
    record(key, rangeText(formatNumber(min), formatNumber(max), minExclusive));
    const auto& v = require(key);
    if (!v.is_number()) fail(key, "expected a number, got " + describeType(v));
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < min || d > max || (minExclusive && d == min))
        fail(key, "value " + v.dump() +
                      " is out of range; allowed: " + (minExclusive ? "greater than " : "from ") +
                      formatNumber(min) + " to " + formatNumber(max));
    return d;
}

double ObjectReader::number(const std::string& key, double min, double max, double fallback,
                            bool minExclusive) {
    record(key, rangeText(formatNumber(min), formatNumber(max), minExclusive));
    if (!has(key)) {
        known_.push_back(key);
        return fallback;
    }
    return number(key, min, max, minExclusive);
}

std::string ObjectReader::string(const std::string& key) {
    const auto& v = require(key);
    if (!v.is_string()) fail(key, "expected a string, got " + describeType(v));
    return v.get<std::string>();
}

std::string ObjectReader::string(const std::string& key, const std::string& fallback) {
    if (!has(key)) {
        known_.push_back(key);
        return fallback;
    }
    return string(key);
}

bool ObjectReader::boolean(const std::string& key, bool fallback) {
    record(key, "true / false");
    if (!has(key)) {
        known_.push_back(key);
        return fallback;
    }
    const auto& v = require(key);
    if (!v.is_boolean()) fail(key, "expected true or false, got " + describeType(v));
    return v.get<bool>();
}

std::string ObjectReader::choice(const std::string& key, const std::vector<std::string>& allowed,
                                 const std::string& fallback) {
    std::string options;
    for (const auto& a : allowed)
        options += (options.empty() ? "" : " / ") + a;
    record(key, options);
    const std::string v = fallback.empty() ? string(key) : string(key, fallback);
    if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return v;
    std::string list;
    for (const auto& a : allowed)
        list += (list.empty() ? "" : ", ") + ("\"" + a + "\"");
    auto near = didYouMean(v, allowed);
    fail(key, "\"" + v + "\" is not allowed; choose one of " + list +
                  (near ? " (did you mean \"" + *near + "\"?)" : ""));
}

void ObjectReader::finish() {
    for (auto it = j_.begin(); it != j_.end(); ++it) {
        if (std::find(known_.begin(), known_.end(), it.key()) != known_.end()) continue;
        auto near = didYouMean(it.key(), known_);
        std::string allowed;
        auto sorted = known_;
        std::sort(sorted.begin(), sorted.end());
        sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
        for (const auto& k : sorted)
            allowed += (allowed.empty() ? "" : ", ") + k;
        fail(it.key(), "unknown key" +
                           (near ? " (did you mean \"" + *near + "\"?)" : std::string()) +
                           "; allowed keys here: " + allowed);
    }
}

} // namespace madmax
