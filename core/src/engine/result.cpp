#include "madmax/result.hpp"

namespace madmax {

std::string_view toString(TimelineKind k) {
    switch (k) {
    case TimelineKind::Forward:
        return "forward";
    case TimelineKind::Backward:
        return "backward";
    case TimelineKind::Recompute:
        return "recompute";
    case TimelineKind::Optimizer:
        return "optimizer";
    case TimelineKind::Bubble:
        return "bubble";
    case TimelineKind::Comm:
        return "comm";
    case TimelineKind::Steady:
        return "steady";
    case TimelineKind::HostIdle:
        return "host_idle";
    case TimelineKind::Wait:
        return "wait";
    case TimelineKind::Embedding:
        return "embedding";
    }
    return "?";
}

CommTime Result::dimTotal(ParallelDim d) const {
    CommTime t;
    for (const auto& c : comm[static_cast<int>(d)]) {
        t.serializedS += c.serializedS;
        t.exposedS += c.exposedS;
    }
    return t;
}

CommTime Result::collectiveTotal(Collective c) const {
    CommTime t;
    for (const auto& dim : comm) {
        t.serializedS += dim[static_cast<int>(c)].serializedS;
        t.exposedS += dim[static_cast<int>(c)].exposedS;
    }
    return t;
}

double Result::serializedCommS() const {
    double s = 0;
    for (const auto& dim : comm)
        for (const auto& c : dim)
            s += c.serializedS;
    return s;
}

} // namespace madmax
