// Search and sweep results as JSON (schemas "madmax-search/1", "madmax-sweep/1") and CSV: what
// `madmax search`/`sweep` print, and what `madmax merge` combines.
#pragma once

#include "madmax/codesign.hpp"
#include "madmax/search.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace madmax {

nlohmann::json toJson(const Candidate& c);
/// `withScatter`: include the scatter sample (up to SearchOptions::scatterLimit candidates).
nlohmann::json toJson(const SearchResult& r, bool withScatter = false);
nlohmann::json toJson(const SweepResult& r);
nlohmann::json toJson(const std::vector<Sensitivity>& s);
Candidate candidateFromJson(const nlohmann::json& j, const std::string& file);
SearchResult searchFromJson(const nlohmann::json& j, const std::string& file);
SweepResult sweepFromJson(const nlohmann::json& j, const std::string& file);

/// Schema "madmax-pareto/1": every point with its system, GPUs, price, best strategy and fronts.
nlohmann::json toJson(const ResourcePareto& r);
std::string paretoCsv(const ResourcePareto& r);

std::string searchCsv(const SearchResult& r);
std::string sweepCsv(const SweepResult& r);

} // namespace madmax
