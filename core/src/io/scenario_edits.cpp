// What a change of one strategy field implies for the others (madmax/scenario_io.hpp).
#include "madmax/scenario_io.hpp"
#include "madmax/strategy.hpp"

namespace madmax {

FieldEdits impliedEdits(const Scenario& s, const std::string& path, long long value) {
    const Strategy& st = s.strategy;
    FieldEdits edits{{path, value}};
    auto rederiveDp = [&](long long gpus, long long tp, long long pp, long long cp) {
        if (const int dp = dataParallelDegree(gpus, tp, pp, cp)) edits.push_back({"strategy.dp", dp});
    };
    if (path == "strategy.tp") rederiveDp(s.gpus, value, st.pp, st.cp);
    else if (path == "strategy.pp") rederiveDp(s.gpus, st.tp, value, st.cp);
    else if (path == "strategy.cp") rederiveDp(s.gpus, st.tp, st.pp, value);
    else if (path == "gpus") rederiveDp(value, st.tp, st.pp, st.cp);
    else if (path == "strategy.vp")
        edits.push_back({"strategy.schedule", std::string(toString(scheduleForChunks(int(value))))});
    else if (path == "strategy.dp") {
        long long gpus = 0;
        if (!__builtin_mul_overflow(replicaGpus(st), value, &gpus)) edits.push_back({"gpus", gpus});
    }
    return edits;
}

} // namespace madmax
