// The reference code's machinery (docs/reference/seed-format.md §1): bandwidths per level, parallel factors,
// the parallel checks, op names, and the traces collected from the streams.
#include "seed/reference_ops.hpp"

namespace madmax::seed::detail {

Bandwidths bandwidths(const System& s) {
    const double gpn = double(s.devices) / s.nodes;
    const double intra = s.nvlinks * s.bwPerNvlink / 2.0 * s.nvlinkUtil;
    const double inter = s.ibPorts * s.ibBw / 2.0 * s.ibUtil / gpn;
    const double blend = s.arPercIntra * intra + (1.0 - s.arPercIntra) * inter;
    Bandwidths b;
    if (s.nodes == 1) {
        b.a2a = b.ar = {blend};
    } else {
        b.a2a = {intra, inter};
        b.ar = {intra, blend};
    }
    for (double v : b.ar)
        b.ag.push_back(2.0 * v), b.rs.push_back(2.0 * v);
    return b;
}

/// Python's list[level − n]: the last entry for 1-D strategies, intra then inter for 2-D.
double entry(const std::vector<double>& list, int level, int n, const std::string& file) {
    const int idx = int(list.size()) + level - n;
    if (idx < 0 || idx >= int(list.size()))
        throw InputError(file, "parallel",
                         "a " + std::to_string(n) + "-level strategy on a system with " +
                             std::to_string(list.size()) +
                             " bandwidth level(s): the reference code indexes past its list");
    return list[std::size_t(idx)];
}

/// Python's list[level − n] when level and n come from different components (the
/// DLRM_Transformer file's quirk): a non-negative index counts from the front.
double pyEntry(const std::vector<double>& list, int level, int n, const std::string& file) {
    int idx = level - n;
    if (idx < 0) idx += int(list.size());
    if (idx < 0 || idx >= int(list.size()))
        throw InputError(file, "parallel",
                         "the reference code indexes its bandwidth list at " +
                             std::to_string(level - n) + " of " + std::to_string(list.size()) +
                             " (a Python IndexError)");
    return list[std::size_t(idx)];
}

Factors factors(const Parallel& p, bool embedding) {
    Factors f;
    for (std::size_t i = 0; i < p.kinds.size(); ++i) {
        const std::string& k = p.kinds[i];
        const double d = p.degrees[i];
        if (k == "ddp" || k == "fsdp") f.duplicate *= d;
        if (embedding ? k == "mp" : (k == "tp" || k == "pp" || k == "fsdp")) f.shard *= d;
        if (k == "tp") {
            f.tp = d;
            f.tpLevel = int(i);
        }
        if (k == "fsdp") f.fsdpDegree = int(d);
    }
    f.firstIsFsdp = !p.kinds.empty() && p.kinds[0] == "fsdp";
    return f;
}

/// The reference code's assertions, as errors naming the task field.
void checkParallel(const Parallel& p, const std::string& field, const System& s,
                   const std::string& file) {
    if (p.empty()) return;
    if (p.kinds.size() > 2)
        throw InputError(file, field, "at most 2 levels (the reference code's restrict2d)");
    long long product = 1; // two degrees of at most 2^24: no overflow
    for (int d : p.degrees)
        product *= d;
    if (product != s.devices)
        throw InputError(file, field + "_degree",
                         "the degrees multiply to " + std::to_string(product) +
                             ", but the system has " + std::to_string(s.devices) +
                             " devices; they must be equal");
    for (std::size_t i = 1; i < p.kinds.size(); ++i)
        if (p.kinds[i] == "fsdp") throw InputError(file, field, "fsdp may only be the first level");
    const int gpn = s.devices / s.nodes;
    if (p.kinds.size() == 2 && p.degrees[0] != gpn && p.degrees[0] != s.devices)
        throw InputError(file, field + "_degree",
                         "with 2 levels the first degree must be the GPUs per node (" +
                             std::to_string(gpn) + ") or all " + std::to_string(s.devices) +
                             " devices");
}

std::string layerName(const std::string& prefix, int i) {
    return prefix + std::to_string(i);
}

void collect(const Streams& st, ReferenceResult& r) {
    for (const auto& o : st.computeOps()) {
        (o.kind == Kind::Emb ? r.embS : r.gemmS) += o.end - o.start;
        r.compute.push_back({o.name, o.start, o.end});
    }
    for (const auto& o : st.commOps()) {
        const double d = o.end - o.start;
        switch (o.kind) {
        case Kind::AllToAll:
            r.allToAllS += d;
            break;
        case Kind::AllReduce:
            r.allReduceS += d;
            break;
        case Kind::AllGather:
            r.allGatherS += d;
            break;
        case Kind::ReduceScatter:
            r.reduceScatterS += d;
            break;
        default:
            break;
        }
        r.comm.push_back({o.name, o.start, o.end});
    }
}

double peakFor(const System& s, double bytes) {
    return bytes >= 8 ? s.f64 : bytes >= 4 ? s.f32 : bytes >= 2 ? s.f16 : s.i8;
}

} // namespace madmax::seed::detail
