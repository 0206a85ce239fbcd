// The values each parallel degree can take for a model: what sliders step through and what
// the search enumerates.
#pragma once

#include "madmax/scenario.hpp"

#include <algorithm>
#include <vector>

namespace madmax {

std::vector<int> divisorsOf(long long n, long long cap);

/// TP degrees dividing heads, KV heads, FFN width and vocabulary (up to `cap`).
std::vector<int> tpChoices(const Model& m, int cap = 128);
/// PP degrees dividing the layer count.
std::vector<int> ppChoices(const Model& m);
/// Virtual stages per GPU dividing the layers per stage.
std::vector<int> vpChoices(const Model& m, int pp);
/// Powers of two dividing the sequence length (up to `cap`).
std::vector<int> cpChoices(int seqLen, int cap = 64);
/// Powers of two from 1 to `cap`.
std::vector<int> powersOfTwo(long long cap);
/// Micro-batch sizes dividing the per-replica batch.
std::vector<int> microBatchChoices(int globalBatch, int dp);

/// A restriction admits `v`: it is empty (no restriction) or lists `v` (`--restrict`).
template <class T> bool allowed(const std::vector<T>& restrict, T v) {
    return restrict.empty() || std::find(restrict.begin(), restrict.end(), v) != restrict.end();
}

} // namespace madmax
