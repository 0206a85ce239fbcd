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

/// A stable 64-bit hash (hex) of what a search covers: the scenario, the restrictions, the
/// objective and the token budget. Shards of one run share it; `madmax merge` compares them.
std::string searchFingerprint(const Scenario& base, const SearchSpace& space,
                              const SearchOptions& options);
/// Refuses shard outputs that are not the parts of one run: a different objective, budget,
/// scenario or space (fingerprint), shard count, a part given twice or a part missing. Each
/// error names the file and what to do.
void checkSearchShards(const std::vector<SearchResult>& shards,
                       const std::vector<std::string>& files);
std::string sweepCsv(const SweepResult& r);

} // namespace madmax
