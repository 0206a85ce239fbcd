#include "madmax/strategy_space.hpp"

#include <numeric>

namespace madmax {

std::vector<int> divisorsOf(long long n, long long cap) {
    std::vector<int> out;
    for (long long d = 1; d <= n && d <= cap; ++d)
        if (n % d == 0) out.push_back(int(d));
    return out;
}

std::vector<int> tpChoices(const Model& m, int cap) {
    long long g = std::gcd<long long>(m.heads, m.kvHeads);
    g = std::gcd<long long>(g, m.ffnHidden);
    g = std::gcd<long long>(g, m.vocab);
    return divisorsOf(g, cap);
}

std::vector<int> ppChoices(const Model& m) {
    return divisorsOf(m.layers, m.layers);
}

std::vector<int> vpChoices(const Model& m, int pp) {
    if (pp <= 1 || m.layers % pp != 0) return {1};
    return divisorsOf(m.layers / pp, m.layers / pp);
}

std::vector<int> cpChoices(int seqLen, int cap) {
    std::vector<int> out;
    for (int c = 1; c <= cap && seqLen % c == 0; c *= 2)
        out.push_back(c);
    return out;
}

std::vector<int> powersOfTwo(long long cap) {
    std::vector<int> out;
    for (long long v = 1; v <= cap; v *= 2)
        out.push_back(int(v));
    return out;
}

std::vector<int> microBatchChoices(int globalBatch, int dp) {
    if (dp < 1 || globalBatch % dp != 0) return {1};
    return divisorsOf(globalBatch / dp, 64);
}

} // namespace madmax
