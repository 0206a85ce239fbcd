#include "madmax/search_io.hpp"

#include "madmax/error.hpp"
#include "madmax/json_reader.hpp"
#include "madmax/scenario_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>

namespace madmax {

using nlohmann::json;

namespace {
/// A CSV field in double quotes, its own quotes doubled (RFC 4180): reasons quote values.
std::string csvQuoted(const std::string& s) {
    std::string out = "\"";
    for (char ch : s) {
        if (ch == '"') out += '"';
        out += ch;
    }
    return out + '"';
}
} // namespace

json toJson(const Candidate& c) {
    json st = toJson(c.strategy);
    // A DLRM's strategy is its sharding plan, one type per table group (candidateFromJson
    // checks the count); its TP/PP/DP fields alone describe nothing.
    if (c.embTables > 0) writeDlrmPlan(st, c.strategy.dlrm, c.embTables, false);
    json out = {{"gpus", c.gpus},
                {"spec", candidateSpec(c)},
                {"strategy", st},
                {"step_time_s", c.stepTimeS},
                {"tokens_per_s", c.tokensPerS},
                {"tokens_per_s_per_gpu", c.gpus ? c.tokensPerS / c.gpus : 0.0},
                {"mfu", c.mfu},
                {"memory_bytes", c.memoryBytes},
                {"margin_bytes", c.marginBytes},
                {"exposed_comm_s", c.exposedCommS},
                {"score", c.score},
                {"fits", c.fits}};
    if (c.embTables > 0) out["emb_tables"] = c.embTables;
    if (c.servingBatch > 0)
        out["serving"] = {{"batch", c.servingBatch},
                          {"precision", std::string(toString(c.servingPrecision))}};
    return out;
}

Candidate candidateFromJson(const json& j, const std::string& file) {
    try {
        Candidate c;
        const json& g = j.at("gpus");
        if (!g.is_number_integer() || g.get<long long>() < 1 || g.get<long long>() > (1LL << 30))
            throw InputError(file, "candidate.gpus", "must be a whole number of GPUs from 1 to 2^30");
        c.gpus = int(g.get<long long>());
        c.strategy = parseStrategy(j.at("strategy"), file, c.gpus);
        // Each field read by name, so a wrong type says which (not the JSON library's words).
        auto number = [&](const char* key) {
            if (!j.contains(key) || !j.at(key).is_number())
                throw InputError(file, std::string("candidate.") + key,
                                 "expected a number, got " +
                                     (j.contains(key) ? j.at(key).dump() : "nothing"));
            return j.at(key).get<double>();
        };
        c.stepTimeS = number("step_time_s");
        c.tokensPerS = number("tokens_per_s");
        c.mfu = number("mfu");
        c.memoryBytes = number("memory_bytes");
        c.marginBytes = number("margin_bytes");
        c.exposedCommS = number("exposed_comm_s");
        c.score = number("score");
        if (!j.contains("fits") || !j.at("fits").is_boolean())
            throw InputError(file, "candidate.fits", "expected true or false");
        c.fits = j.at("fits").get<bool>();
        if (j.contains("serving")) {
            const json& sv = j.at("serving");
            const json& b = sv.at("batch");
            if (!b.is_number_integer() || b.get<long long>() < 1 ||
                b.get<long long>() > (1LL << 30))
                throw InputError(file, "candidate.serving.batch",
                                 "must be a whole batch per replica from 1 to 2^30");
            c.servingBatch = int(b.get<long long>());
            const json& pr = sv.at("precision");
            const auto prec = pr.is_string() ? parsePrecision(pr.get<std::string>()) : std::nullopt;
            if (!prec)
                throw InputError(file, "candidate.serving.precision",
                                 "expected fp32, tf32, bf16, fp16, fp8 or fp4, got " + pr.dump());
            c.servingPrecision = *prec;
        }
        if (j.contains("emb_tables")) {
            const json& t = j.at("emb_tables");
            if (!t.is_number_integer() || t.get<long long>() < 1 ||
                t.get<long long>() > kMaxTableGroups)
                throw InputError(file, "candidate.emb_tables",
                                 "must be a whole number of table groups from 1 to " +
                                     std::to_string(kMaxTableGroups));
            c.embTables = int(t.get<long long>());
            const json& e = j.at("strategy").value("emb_sharding", json());
            if (!e.is_array() || e.size() != std::size_t(c.embTables))
                throw InputError(file, "candidate.strategy.emb_sharding",
                                 "must list one sharding type per table group (emb_tables = " +
                                     std::to_string(c.embTables) + ")");
        }
        // What no search can have produced: refuse it rather than merge it.
        auto bad = [&](const char* field, const std::string& why) {
            throw InputError(file, std::string("candidate.") + field, why);
        };
        if (c.gpus < 1) bad("gpus", "must be at least 1");
        if (!std::isfinite(c.stepTimeS) || c.stepTimeS <= 0)
            bad("step_time_s", "must be a positive number of seconds");
        if (!std::isfinite(c.tokensPerS) || c.tokensPerS < 0)
            bad("tokens_per_s", "must be a non-negative number");
        if (!std::isfinite(c.mfu) || c.mfu < 0 || c.mfu > 1) bad("mfu", "must lie in [0, 1]");
        if (!std::isfinite(c.memoryBytes) || c.memoryBytes < 0)
            bad("memory_bytes", "must be a non-negative number");
        if (!std::isfinite(c.marginBytes)) bad("margin_bytes", "must be a number");
        if (!std::isfinite(c.exposedCommS) || c.exposedCommS < 0)
            bad("exposed_comm_s", "must be a non-negative number of seconds");
        // Every objective's score is a rate: tokens/s, 1/seconds, 1/dollars.
        if (!std::isfinite(c.score) || c.score < 0) bad("score", "must be a non-negative number");
        return c;
    } catch (const json::exception& e) {
        throw InputError(file, "candidate", std::string("malformed: ") + e.what());
    }
}

namespace {
/// A whole number in [lo, hi] (a JSON float such as 1e30 is never converted to int).
long long wholeNumber(const json& v, const std::string& file, const std::string& field,
                      long long lo, long long hi) {
    if (!v.is_number_integer() || v.get<long long>() < lo || v.get<long long>() > hi)
        throw InputError(file, field,
                         "expected a whole number from " + std::to_string(lo) + " to " +
                             std::to_string(hi) + ", got " + v.dump());
    return v.get<long long>();
}
json candidates(const std::vector<Candidate>& v) {
    json a = json::array();
    for (const auto& c : v)
        a.push_back(toJson(c));
    return a;
}
std::vector<Candidate> candidatesFrom(const json& j, const char* key, const std::string& file) {
    std::vector<Candidate> out;
    if (!j.contains(key)) return out;
    for (const auto& c : j.at(key))
        out.push_back(candidateFromJson(c, file));
    return out;
}
json statsJson(const SearchStats& s) {
    // "enumerated": valid configurations examined (each memory-checked); "timed": those that fit
    // and the engine evaluated in full. Rates are per wall-clock second of the search.
    return {{"enumerated", s.enumerated},
            {"timed", s.feasible},
            {"infeasible", s.infeasible},
            {"pruned", s.pruned},
            {"seconds", s.seconds},
            {"enumerated_per_s", s.enumeratedPerS},
            {"timed_per_s", s.timedPerS}};
}
SearchStats statsFrom(const json& j) {
    SearchStats s;
    // Counts are whole numbers: a float such as 1e123 is refused, never converted (UB).
    auto count = [&j](const char* key) -> std::size_t {
        const auto it = j.find(key);
        return it == j.end() ? 0
                             : std::size_t(wholeNumber(*it, "", std::string("stats.") + key, 0,
                                                       1LL << 53));
    };
    s.enumerated = count("enumerated");
    s.feasible = count("timed");
    s.infeasible = count("infeasible");
    s.pruned = count("pruned");
    s.seconds = j.value("seconds", 0.0);
    s.enumeratedPerS = j.value("enumerated_per_s", 0.0);
    s.timedPerS = j.value("timed_per_s", 0.0);
    return s;
}
} // namespace

json toJson(const SearchResult& r, bool withScatter) {
    json heat = json::array();
    for (const auto& c : r.heatmap) {
        json cell = {
            {"tp", c.tp}, {"pp", c.pp}, {"any_valid", c.anyValid}, {"any_feasible", c.anyFeasible}};
        if (c.anyFeasible) cell["best"] = toJson(c.best);
        heat.push_back(cell);
    }
    json out = {{"schema", "madmax-search/1"},
                {"objective", std::string(toString(r.objective))},
                {"token_budget", r.tokenBudget},
                {"top", candidates(r.top)},
                {"pareto_memory", candidates(r.paretoMemory)},
                {"pareto_latency", candidates(r.paretoLatency)},
                {"pareto_gpus", candidates(r.paretoGpus)},
                {"heatmap", heat},
                {"stats", statsJson(r.stats)},
                {"cancelled", r.cancelled},
                {"shard", {{"index", r.shardIndex}, {"count", r.shardCount}}}};
    if (!r.fingerprint.empty()) out["fingerprint"] = r.fingerprint;
    // The scatter sample (up to 20,000 configurations, ~5 MB) only when asked for.
    if (withScatter) out["scatter"] = candidates(r.scatter);
    if (r.baseline) out["baseline"] = toJson(*r.baseline);
    if (r.speedupOverBaseline) out["speedup_over_baseline"] = *r.speedupOverBaseline;
    return out;
}

namespace {
/// A search file's objective, token budget and cancelled flag, each checked by name: an unknown
/// objective or a budget no search had is refused, not read as the default.
void searchHeader(const json& j, const std::string& file, SearchResult& r) {
    const json objective = j.value("objective", json("throughput"));
    const auto o = objective.is_string() ? parseObjective(objective.get<std::string>()) : std::nullopt;
    if (!o)
        throw InputError(file, "objective",
                         "expected throughput, time or cost, got " + objective.dump());
    r.objective = *o;
    const json budget = j.value("token_budget", json(1e12));
    if (!budget.is_number() || !(budget.get<double>() > 0) || !(budget.get<double>() < 1e30))
        throw InputError(file, "token_budget",
                         "expected a number of tokens above 0 (below 1e30), got " + budget.dump());
    r.tokenBudget = budget.get<double>();
    const json cancelled = j.value("cancelled", json(false));
    if (!cancelled.is_boolean()) throw InputError(file, "cancelled", "expected true or false");
    r.cancelled = cancelled.get<bool>();
}
} // namespace

SearchResult searchFromJson(const json& j, const std::string& file) {
    if (schemaOf(j) != "madmax-search/1")
        throw InputError(file, "schema",
                         "expected \"madmax-search/1\" (the output of `madmax search --json`)");
    try {
    SearchResult r;
    searchHeader(j, file, r);
    r.top = candidatesFrom(j, "top", file);
    r.paretoMemory = candidatesFrom(j, "pareto_memory", file);
    r.paretoGpus = candidatesFrom(j, "pareto_gpus", file);
    r.paretoLatency = candidatesFrom(j, "pareto_latency", file);
    r.scatter = candidatesFrom(j, "scatter", file);
    for (const auto& c : j.value("heatmap", json::array())) {
        HeatCell h;
        h.tp = int(wholeNumber(c.at("tp"), file, "heatmap.tp", 1, 1 << 20));
        h.pp = int(wholeNumber(c.at("pp"), file, "heatmap.pp", 1, 1 << 20));
        h.anyValid = c.value("any_valid", false);
        h.anyFeasible = c.value("any_feasible", false);
        if (h.anyFeasible) h.best = candidateFromJson(c.at("best"), file);
        r.heatmap.push_back(h);
    }
    if (j.contains("baseline")) r.baseline = candidateFromJson(j["baseline"], file);
    r.stats = statsFrom(j.value("stats", json::object()));
    if (j.contains("shard")) {
        const json& sh = j.at("shard");
        r.shardCount = int(wholeNumber(sh.at("count"), file, "shard.count", 1, 1 << 20));
        r.shardIndex = int(wholeNumber(sh.at("index"), file, "shard.index", 0, r.shardCount - 1));
    }
    if (j.contains("fingerprint")) r.fingerprint = j.at("fingerprint").get<std::string>();
    return r;
    } catch (const json::exception& e) {
        throw InputError(file, "", std::string("malformed search output: ") + e.what());
    }
}

json toJson(const SweepResult& r) {
    json axes = json::array(), points = json::array();
    for (const auto& a : r.axes)
        axes.push_back({{"knob", a.knob}, {"factors", a.factors}});
    for (const auto& p : r.points) {
        json pt = {{"index", p.index},
                   {"factors", p.factors},
                   {"feasible", p.feasible},
                   {"speedup", p.speedup},
                   {"stats", statsJson(p.stats)}};
        if (p.feasible)
            pt["best"] = toJson(p.best);
        else
            pt["why_none"] = p.whyNone;
        points.push_back(pt);
    }
    json changes = json::array();
    for (auto i : r.strategyChanges())
        changes.push_back(r.points[i].index);
    return {{"schema", "madmax-sweep/1"},
            {"axes", axes},
            {"unscaled", toJson(r.unscaled)},
            {"points", points},
            {"strategy_changes_at", changes}};
}

SweepResult sweepFromJson(const json& j, const std::string& file) {
    if (schemaOf(j) != "madmax-sweep/1")
        throw InputError(file, "schema",
                         "expected \"madmax-sweep/1\" (the output of `madmax sweep --json`)");
    try {
        SweepResult r;
        for (const auto& a : j.at("axes")) {
            r.axes.push_back({a.at("knob"), a.at("factors").get<std::vector<double>>()});
            if (r.axes.back().factors.empty())
                throw InputError(file, "axes", "knob " + r.axes.back().knob + " has no factors");
            for (double f : r.axes.back().factors)
                if (!std::isfinite(f) || f <= 0)
                    throw InputError(file, "axes",
                                     "knob " + r.axes.back().knob + " has a factor that is not "
                                                                    "a positive number");
        }
        if (r.axes.empty()) throw InputError(file, "axes", "a sweep needs at least one knob");
        std::size_t pointsInGrid = 1;
        for (const auto& a : r.axes)
            pointsInGrid *= a.factors.size();
        r.unscaled = candidateFromJson(j.at("unscaled"), file);
        for (const auto& p : j.at("points")) {
            SweepPoint s;
            const long long index = wholeNumber(p.at("index"), file, "points.index", 0, 1LL << 40);
            s.index = std::size_t(index);
            s.factors = p.at("factors").get<std::vector<double>>();
            s.feasible = p.at("feasible");
            s.speedup = p.at("speedup");
            s.stats = statsFrom(p.value("stats", json::object()));
            if (s.feasible)
                s.best = candidateFromJson(p.at("best"), file);
            else if (p.contains("why_none"))
                s.whyNone = p.at("why_none").get<std::string>();
            if (s.index >= pointsInGrid ||
                s.factors.size() != r.axes.size())
                throw InputError(file, "points",
                                 "point " + std::to_string(s.index) +
                                     " does not belong to the grid of the file's axes");
            if (!std::isfinite(s.speedup) || s.speedup < 0)
                throw InputError(file, "points", "a speedup must be a non-negative number");
            r.points.push_back(s);
        }
        return r;
    } catch (const json::exception& e) {
        throw InputError(file, "", std::string("malformed sweep: ") + e.what());
    }
}

json toJson(const std::vector<Sensitivity>& s) {
    json a = json::array();
    for (const auto& x : s)
        a.push_back({{"knob", x.knob},
                     {"speedup_at_half", x.speedupHalf},
                     {"speedup_at_double", x.speedupDouble}});
    return a;
}

std::string searchFingerprint(const Scenario& base, const SearchSpace& space,
                              const SearchOptions& options) {
    std::vector<int> recompute;
    for (Recompute r : space.recompute)
        recompute.push_back(int(r));
    const json what = {{"scenario", toJson(base)},
                       {"tp", space.tp},
                       {"pp", space.pp},
                       {"vp", space.vp},
                       {"cp", space.cp},
                       {"mb", space.microBatch},
                       {"zero", space.zeroStage},
                       {"ep", space.ep},
                       {"etp", space.etp},
                       {"recompute", recompute},
                       {"recompute_layers", space.recomputeLayers},
                       {"offload_layers", space.offloadLayers},
                       {"sp", space.sequenceParallel},
                       {"overlap", space.tpCommOverlap},
                       {"gpus", space.gpus},
                       {"tp_across_scale_up", space.allowTpAcrossScaleUp},
                       {"objective", std::string(toString(options.objective))},
                       {"token_budget", options.tokenBudget}};
    // FNV-1a over the canonical dump (sorted keys): stable across runs and machines.
    std::uint64_t h = 1469598103934665603ULL;
    for (unsigned char c : what.dump()) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return hex;
}

void checkSearchShards(const std::vector<SearchResult>& shards,
                       const std::vector<std::string>& files) {
    if (shards.empty()) return;
    const SearchResult& first = shards.front();
    auto name = [&](std::size_t i) { return i < files.size() ? files[i] : std::string("merge"); };
    std::vector<int> seen(std::size_t(first.shardCount), -1);
    for (std::size_t i = 0; i < shards.size(); ++i) {
        const SearchResult& r = shards[i];
        if (r.objective != first.objective || r.tokenBudget != first.tokenBudget)
            throw InputError(name(i), "objective",
                             std::string("searched for ") + toString(r.objective).data() +
                                 " but " + name(0) + " for " + toString(first.objective).data() +
                                 " (or another token budget); merge shards of one search");
        if (!r.fingerprint.empty() && !first.fingerprint.empty() &&
            r.fingerprint != first.fingerprint)
            throw InputError(name(i), "fingerprint",
                             "searched another scenario or space than " + name(0) +
                                 "; merge the shards of one search (same scenario, --set and "
                                 "--restrict)");
        if (r.shardCount != first.shardCount)
            throw InputError(name(i), "shard",
                             "is part of a run in " + std::to_string(r.shardCount) + " shards, " +
                                 name(0) + " of one in " + std::to_string(first.shardCount) +
                                 "; merge the shards of one search");
        if (r.cancelled)
            throw InputError(name(i), "cancelled",
                             "is a cancelled search: its shard was not searched to the end; "
                             "re-run it, then merge");
        int& at = seen[std::size_t(r.shardIndex)];
        if (at >= 0)
            throw InputError(name(i), "shard",
                             "is shard " + std::to_string(r.shardIndex) + "/" +
                                 std::to_string(r.shardCount) + ", as " + name(std::size_t(at)) +
                                 " is: the same part given twice");
        at = int(i);
    }
    std::string missing;
    int absent = 0;
    for (std::size_t k = 0; k < seen.size(); ++k)
        if (seen[k] < 0) {
            missing += (missing.empty() ? "" : ", ") + std::to_string(k);
            ++absent;
        }
    if (absent > 0)
        throw InputError("merge", "shard",
                         std::string(absent == 1 ? "shard " : "shards ") + missing + " of " +
                             std::to_string(first.shardCount) +
                             (absent == 1 ? " is" : " are") +
                             " missing; merge every part of the search (the result of a subset "
                             "is not the search's)");
}

std::string searchCsv(const SearchResult& r) {
    std::ostringstream os;
    os << "rank,gpus,tp,pp,vp,cp,dp,micro_batch,zero_stage,recompute,sequence_parallel,tp_comm_"
          "overlap,"
          "step_time_s,tokens_per_s,tokens_per_s_per_gpu,mfu,memory_bytes,margin_bytes,score,ep,"
          "etp,"
          "spec\n";
    int rank = 1;
    for (const auto& c : r.top) {
        const Strategy& s = c.strategy;
        os << rank++ << ',' << c.gpus << ',' << s.tp << ',' << s.pp << ',' << s.vp << ',' << s.cp
           << ',' << s.dp << ',' << s.microBatch << ',' << s.zeroStage << ','
           << toString(s.recompute) << ',' << int(s.sequenceParallel) << ',' << int(s.tpCommOverlap)
           << ',' << c.stepTimeS << ',' << c.tokensPerS << ',' << c.tokensPerS / c.gpus << ','
           << c.mfu << ',' << c.memoryBytes << ',' << c.marginBytes << ',' << c.score << ',' << s.ep
           << ',' << s.etp << ',' << csvQuoted(candidateSpec(c)) << '\n';
    }
    return os.str();
}

std::string sweepCsv(const SweepResult& r) {
    std::ostringstream os;
    for (const auto& a : r.axes)
        os << a.knob << ',';
    // A DLRM's sweep ranks samples/s (its points' plans are the strategies).
    const bool dlrm = r.unscaled.embTables > 0 ||
                      std::any_of(r.points.begin(), r.points.end(),
                                  [](const SweepPoint& p) { return p.best.embTables > 0; });
    os << "feasible,speedup," << (dlrm ? "best_samples_per_s" : "best_tokens_per_s")
       << ",best_gpus,best_strategy,why_none\n";
    for (const auto& p : r.points) {
        for (double f : p.factors)
            os << f << ',';
        os << int(p.feasible) << ',' << p.speedup << ',' << (p.feasible ? p.best.tokensPerS : 0.0)
           << ',' << (p.feasible ? p.best.gpus : 0) << ','
           << csvQuoted(p.feasible ? candidateSpec(p.best) : "") << ',' << csvQuoted(p.whyNone)
           << '\n';
    }
    return os.str();
}

json toJson(const ResourcePareto& r) {
    json points = json::array();
    for (const ResourcePoint& p : r.points) {
        json pt = {{"system", p.systemId},
                   {"system_name", p.systemName},
                   {"gpus", p.gpus},
                   {"price_per_gpu_hour", p.pricePerGpuHour},
                   {"dollars_per_hour", p.dollarsPerHour()},
                   {"feasible", p.feasible},
                   {"front_gpus", p.frontGpus},
                   {"front_dollars", p.frontDollars}};
        if (p.feasible) {
            pt["throughput"] = p.best.tokensPerS;
            pt["dollars_per_million"] = p.dollarsPerMillion();
            pt["best"] = toJson(p.best);
            pt["spec"] = p.spec; // in words: a DLRM's plan by table name
        } else {
            pt["why_none"] = p.whyNone;
        }
        points.push_back(pt);
    }
    return {{"schema", "madmax-pareto/1"},
            {"unit", r.unit},
            {"priced", r.priced},
            {"points", points}};
}

std::string paretoCsv(const ResourcePareto& r) {
    std::ostringstream os;
    const std::string unit = r.unit == "samples/s" ? "samples_per_s" : "tokens_per_s";
    os << "system,gpus,price_per_gpu_hour,dollars_per_hour,feasible," << unit
       << ",dollars_per_million,front_gpus,front_dollars,best_strategy,why_none\n";
    for (const ResourcePoint& p : r.points) {
        os << csvQuoted(p.systemId) << ',' << p.gpus << ',' << p.pricePerGpuHour << ','
           << p.dollarsPerHour() << ',' << int(p.feasible) << ','
           << (p.feasible ? p.best.tokensPerS : 0.0) << ',' << p.dollarsPerMillion() << ','
           << int(p.frontGpus) << ',' << int(p.frontDollars) << ','
           << csvQuoted(p.feasible ? p.spec : "") << ',' << csvQuoted(p.whyNone) << '\n';
    }
    return os.str();
}

} // namespace madmax
