#include "madmax/result.hpp"

namespace madmax {

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
