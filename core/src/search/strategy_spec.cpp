// Strategy and restriction specs as the command line writes them ("tp=8,pp=4,dp=16",
// "tp=1..8"), parsed with the field and the fix in every error, and written back.
#include "madmax/search.hpp"

#include "madmax/dlrm_search.hpp"
#include "madmax/error.hpp"
#include "madmax/pipeline_schedule.hpp"
#include "madmax/serving.hpp"
#include "madmax/strategy_numbers.hpp"
#include "madmax/strategy_space.hpp"
#include "madmax/strategy_switches.hpp"

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace madmax {

namespace {
int toInt(const std::string& v, const std::string& key, const std::string& where) {
    try {
        std::size_t used = 0;
        const int x = std::stoi(v, &used);
        if (used == v.size() && x >= 0) return x;
    } catch (const std::exception&) {
    }
    throw InputError(where, key, "\"" + v + "\" is not a non-negative integer");
}

std::vector<std::pair<std::string, std::string>> splitPairs(const std::string& spec,
                                                            const std::string& where) {
    std::vector<std::pair<std::string, std::string>> out;
    std::stringstream ss(spec);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (item.empty()) continue;
        const auto eq = item.find('=');
        if (eq == std::string::npos) {
            if (out.empty()) throw InputError(where, item, "expected name=value");
            out.back().second += "," + item; // a list continues: tp=1,2,4
            continue;
        }
        out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    }
    return out;
}
/// A numeric strategy field's value in a spec, in the range madmax/strategy_numbers.hpp gives.
double specNumber(const StrategyNumber& n, const std::string& v, const std::string& key,
                  const std::string& where) {
    double x = 0;
    if (n.integer()) {
        x = toInt(v, key, where);
    } else {
        try {
            std::size_t used = 0;
            x = std::stod(v, &used);
            if (used != v.size()) throw std::invalid_argument(v);
        } catch (const std::exception&) {
            throw InputError(where, key, "\"" + v + "\" is not a number");
        }
    }
    if (!(x >= n.min && x <= n.max)) {
        std::ostringstream range;
        range << n.min << " to " << n.max;
        throw InputError(where, key,
                         "\"" + v + "\" is out of range: " + std::string(n.key) + " takes " +
                             range.str());
    }
    return x;
}

/// The numeric fields a spec may set, by their shortest names.
std::string specFieldNames() {
    std::string out;
    for (const StrategyNumber& n : strategyNumbers())
        out += (out.empty() ? "" : ", ") + std::string(n.alias.empty() ? n.key : n.alias);
    return out;
}
} // namespace

Strategy parseStrategySpec(const std::string& spec, const Scenario& s) {
    Strategy st = s.strategy;
    const std::string where = "--baseline";
    std::optional<std::string> named; // strategy.schedule, when the spec names one
    for (const auto& [k, v] : splitPairs(spec, where)) {
        if (const StrategyNumber* n = findStrategyNumber(k)) {
            n->set(st, specNumber(*n, v, k, where));
        } else if (k == "sp") {
            st.sequenceParallel = toInt(v, k, where) != 0;
        } else if (k == "overlap") {
            st.tpCommOverlap = toInt(v, k, where) != 0;
        } else if (const StrategySwitch* sw = findStrategySwitch(k)) {
            st.*sw->member = toInt(v, k, where) != 0;
        } else if (k == "recompute") {
            auto r = parseRecompute(v);
            if (!r) throw InputError(where, k, "\"" + v + "\" is not none, selective or full");
            st.recompute = *r;
        } else if (k == "schedule") {
            named = v; // applied below, after vp
        } else {
            throw InputError(where, k,
                             "unknown field; use " + specFieldNames() +
                                 ", recompute, schedule, or an on/off switch (sp, overlap, dp_overlap, "
                                   "cuda_graphs, ... = 0 or 1)");
        }
    }
    // The schedule named, else the one the chunks per GPU imply.
    st.schedule = scheduleForChunks(st.vp);
    if (named) {
        const auto sch = parsePipelineSchedule(*named);
        if (!sch)
            throw InputError(where, "schedule",
                             "\"" + *named + "\" is not a schedule: choose " + scheduleNameList());
        st.schedule = *sch;
    }
    // A baseline that names a recompute other than full and no layer count recomputes no
    // layers in full, whatever the scenario's recompute_layers said.
    if (st.recompute != Recompute::Full && spec.find("recompute_layers=") == std::string::npos &&
        spec.find("rl=") == std::string::npos)
        st.recomputeLayers = 0;
    // Likewise offloading, where the baseline's pipeline or recompute rules it out.
    if ((st.pp > 1 || st.recompute != Recompute::None) &&
        spec.find("offload_layers=") == std::string::npos)
        st.offloadLayers = 0;
    if (spec.find("dp=") == std::string::npos) {
        if (const int dp = dataParallelDegree(s.gpus, st)) st.dp = dp;
    }
    return st;
}

/// The search space's list for a strategy field the search enumerates; nullptr for the others.
static std::vector<int>* searchedDimension(SearchSpace& space, std::string_view key) {
    const std::pair<std::string_view, std::vector<int> SearchSpace::*> dims[] = {
        {"tp", &SearchSpace::tp},
        {"pp", &SearchSpace::pp},
        {"vp", &SearchSpace::vp},
        {"cp", &SearchSpace::cp},
        {"ep", &SearchSpace::ep},
        {"etp", &SearchSpace::etp},
        {"micro_batch", &SearchSpace::microBatch},
        {"zero_stage", &SearchSpace::zeroStage},
        {"recompute_layers", &SearchSpace::recomputeLayers},
        {"offload_layers", &SearchSpace::offloadLayers},
    };
    for (const auto& [name, member] : dims)
        if (name == key) return &(space.*member);
    return nullptr;
}

void parseRestriction(const std::string& spec, SearchSpace& space) {
    const std::string where = "--restrict";
    for (const auto& pair : splitPairs(spec, where)) {
        const std::string& k = pair.first; // a plain reference: lambdas below capture it
        const std::string& v = pair.second;
        std::vector<std::string> items;
        std::stringstream ss(v);
        std::string item;
        while (std::getline(ss, item, ','))
            items.push_back(item);
        // Each dimension's own range: a degree below 1 is not a configuration (and must not
        // surface later as "nothing fits in memory").
        auto ints = [&](std::vector<int>& into, int min, int max) {
            for (const auto& i : items) {
                const int x = toInt(i, k, where);
                if (x < min || x > max)
                    throw InputError(where, k,
                                     "\"" + i + "\" is out of range: " + k + " takes " +
                                         std::to_string(min) + " to " + std::to_string(max));
                into.push_back(x);
            }
        };
        // A strategy field the search enumerates, in the range its declaration gives.
        const StrategyNumber* n = findStrategyNumber(k);
        if (std::vector<int>* dim = n ? searchedDimension(space, n->key) : nullptr)
            ints(*dim, int(n->min), int(n->max));
        else if (k == "sp")
            ints(space.sequenceParallel, 0, 1);
        else if (k == "overlap")
            ints(space.tpCommOverlap, 0, 1);
        else if (k == "gpus")
            ints(space.gpus, 1, 1 << 30);
        else if (k == "recompute") {
            for (const auto& i : items) {
                auto r = parseRecompute(i);
                if (!r) throw InputError(where, k, "\"" + i + "\" is not none, selective or full");
                space.recompute.push_back(*r);
            }
        } else if (k == "draft") {
            ints(space.draftTokens, 0, 16);
        } else if (k == "schedule") {
            for (const auto& i : items) {
                auto sch = parsePipelineSchedule(i);
                if (!sch)
                    throw InputError(where, k,
                                     "\"" + i + "\" is not a schedule: choose " + scheduleNameList());
                space.schedules.push_back(*sch);
            }
        } else {
            throw InputError(where, k,
                             "unknown dimension; use tp, pp, vp, cp, ep, etp, mb, zero, recompute, "
                             "recompute_layers, offload_layers, sp, overlap, gpus, schedule, draft");
        }
    }
}

std::string strategySpec(const Strategy& st) {
    std::ostringstream os;
    os << "tp=" << st.tp << ",pp=" << st.pp << ",vp=" << st.vp << ",cp=" << st.cp << ",dp=" << st.dp
       << ",mb=" << st.microBatch << ",zero=" << st.zeroStage
       << ",recompute=" << toString(st.recompute);
    if (st.recompute == Recompute::Full && st.recomputeLayers > 0)
        os << ",recompute_layers=" << st.recomputeLayers;
    if (st.offloadLayers > 0) os << ",offload_layers=" << st.offloadLayers;
    os << ",sp=" << int(st.sequenceParallel) << ",overlap=" << int(st.tpCommOverlap);
    if (st.ep > 1 || st.etp > 1) os << ",ep=" << st.ep << ",etp=" << st.etp;
    if (st.firstStageLayers || st.lastStageLayers)
        os << ",first=" << st.firstStageLayers << ",last=" << st.lastStageLayers;
    if (st.schedule != scheduleForChunks(st.vp)) os << ",schedule=" << toString(st.schedule);
    return os.str();
}

namespace {
std::string servingSpec(const Candidate& c, bool withBatch) {
    const Strategy& st = c.strategy;
    std::ostringstream os;
    os << "tp=" << st.tp << ",pp=" << st.pp << ",replicas=" << st.dp << ",ep=" << st.ep
       << ",etp=" << st.etp << ",precision=" << toString(c.servingPrecision);
    if (withBatch) os << ",batch=" << c.servingBatch;
    return os.str();
}
} // namespace

std::string candidateSpec(const Candidate& c) {
    if (c.servingBatch > 0) return servingSpec(c, true);
    if (c.embTables <= 0) return strategySpec(c.strategy);
    const DlrmPlan& p = c.strategy.dlrm;
    std::ostringstream os;
    os << "emb=";
    for (int i = 0; i < c.embTables && i < kMaxTableGroups; ++i)
        os << (i ? "," : "") << toString(p.sharding[i]);
    os << ",group=" << p.groupSize << ",pipeline=" << int(p.pipelineSparse)
       << ",kernels=" << (p.perTableKernels ? "per_table" : "fused");
    return os.str();
}

std::string scenarioSpec(const Scenario& s) {
    if (s.model.isDlrm()) return describePlan(s, s.strategy.dlrm);
    if (s.workload.kind != WorkloadKind::Inference) return strategySpec(s.strategy);
    Candidate c;
    c.strategy = s.strategy;
    c.servingPrecision = s.workload.precision;
    c.servingBatch = std::max(1, s.workload.inference.batch);
    std::string spec = servingSpec(c, s.workload.inference.batch > 0);
    if (s.workload.inference.batch <= 0) spec += ",batch=auto";
    return spec;
}

bool sameStrategy(const Candidate& a, const Candidate& b) {
    if (a.servingBatch > 0 || b.servingBatch > 0)
        return a.gpus == b.gpus && (a.servingBatch > 0) == (b.servingBatch > 0) &&
               servingSpec(a, false) == servingSpec(b, false);
    return a.gpus == b.gpus && a.embTables == b.embTables && candidateSpec(a) == candidateSpec(b);
}

} // namespace madmax
