// The embedding tables placed (docs/developer/workloads.md "DLRM"): lookups on the HBM roofline at cache-line
// granularity, each sharding type's shards on the ranks of its group, the most loaded rank,
// each sharding's collectives on the tiers its group spans; the memory per GPU and the rules.
#include "dlrm/dlrm_engine.hpp"

#include "engine/op_cost.hpp"
#include "madmax/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace madmax {

namespace detail {

namespace {

constexpr double kLine = 64.0;      ///< HBM access granularity of a random row read (bytes)
constexpr double kIdBytes = 8.0;    ///< int64 indices
constexpr double kSortBytes = 64.0; ///< radix sort of (index, position) pairs per lookup

/// Bytes one random row read moves: whole 64-byte lines (a 16-byte row costs 64).
double rowBytes(double dim, double elemBytes) {
    return std::ceil(dim * elemBytes / kLine) * kLine;
}

/// Optimizer state read and written per updated row.
double optimizerBytesPerLookup(EmbOptimizer o, double dim) {
    switch (o) {
    case EmbOptimizer::RowwiseAdagrad:
        return 2.0 * kLine; // one fp32 per row, a line each way
    case EmbOptimizer::Adam:
        return 2.0 * 2.0 * rowBytes(dim, 4.0); // m and v, fp32
    case EmbOptimizer::Sgd:
        return 0.0;
    }
    return 0.0;
}

/// Bytes an eager per-table step (nn.Embedding(sparse=True) and torch.optim) moves per lookup
/// beyond the fused backward-update's: the gradient slice the interaction's backward hands each
/// table is made contiguous to become the sparse gradient's values (read and written), and
/// SGD's add_ of a sparse gradient scales those values by −lr into a new tensor (read and
/// written) before index_add_ applies them — that last pass and the rows it updates are the
/// fused update's own bytes. Other optimizers' per-state passes are not priced (no source).
double eagerGradientBytesPerLookup(EmbOptimizer o, double dim, double elemBytes) {
    const double values = dim * elemBytes;
    return 2.0 * values + (o == EmbOptimizer::Sgd ? 2.0 * values : 0.0);
}

/// Optimizer state stored per row.
double optimizerBytesPerRow(EmbOptimizer o, double dim) {
    switch (o) {
    case EmbOptimizer::RowwiseAdagrad:
        return 4.0;
    case EmbOptimizer::Adam:
        return 2.0 * 4.0 * dim;
    case EmbOptimizer::Sgd:
        return 0.0;
    }
    return 0.0;
}

/// Column shards of a CW table: shards of at least 32 columns, at most one per group rank,
/// a power of two that divides the dimension.
int columnShards(int dim, int group) {
    int k = 1;
    while (2 * k <= group && dim % (2 * k) == 0 && dim / (2 * k) >= 32)
        k *= 2;
    return k;
}

/// One table-wise placed shard (a TW table or a CW column shard).
struct Shard {
    double costS = 0;   ///< lookups forward + backward + its all-to-all, for placement
    double lookupB = 0; ///< forward lookup bytes
    double bwdB = 0;    ///< backward + optimizer bytes
    double sendB = 0;   ///< pooled outputs it produces (full all-to-all send buffer share)
    double memB = 0;    ///< rows + optimizer state
    double optB = 0;    ///< of memB, the optimizer state
    double eagerB = 0;  ///< of bwdB, eager per-table modules' own gradient passes
};

using RankLoad = DlrmRankLoad;
void addShard(RankLoad& l, const Shard& s) {
    l.costS += s.costS;
    l.lookupB += s.lookupB;
    l.bwdB += s.bwdB;
    l.sendB += s.sendB;
    l.memB += s.memB;
    l.optB += s.optB;
    l.eagerB += s.eagerB;
}

thread_local std::vector<Shard> tShards;
thread_local std::vector<RankLoad> tLoads;

/// Longest-processing-time placement of the shards on `ranks` bins (what TorchRec's greedy
/// partitioner does by its perf estimate): largest first onto the least loaded that still has
/// room for it in `budgetB` bytes of tables (the least loaded of all when none has).
void placeShards(std::vector<Shard>& shards, std::vector<RankLoad>& loads, int ranks,
                 double budgetB) {
    loads.assign(std::size_t(ranks), RankLoad{});
    // Equal costs (one-hot tables of one width cost the same whatever their rows): the larger
    // first, so the biggest tables land on different GPUs rather than wherever ties fall.
    std::sort(shards.begin(), shards.end(), [](const Shard& a, const Shard& b) {
        return a.costS > b.costS || (a.costS == b.costS && a.memB > b.memB);
    });
    if (shards.empty()) return;
    // Identical shards are common (presets list tables in groups): a min-heap keeps it
    // O(S log G) while the least loaded GPU has room.
    auto cmp = [&](int a, int b) { return loads[a].costS > loads[b].costS; };
    thread_local std::vector<int> heap, full;
    heap.resize(std::size_t(ranks));
    std::iota(heap.begin(), heap.end(), 0);
    std::make_heap(heap.begin(), heap.end(), cmp);
    for (const Shard& s : shards) {
        full.clear();
        int chosen = -1;
        while (!heap.empty()) {
            std::pop_heap(heap.begin(), heap.end(), cmp);
            const int r = heap.back();
            heap.pop_back();
            if (loads[r].memB + s.memB <= budgetB) {
                chosen = r;
                break;
            }
            full.push_back(r); // in order of load: full.front() is the least loaded
        }
        if (chosen < 0) { // no GPU has room: the least loaded, and the memory check says so
            chosen = full.front();
            full.erase(full.begin());
        }
        addShard(loads[chosen], s);
        full.push_back(chosen);
        for (int r : full) {
            heap.push_back(r);
            std::push_heap(heap.begin(), heap.end(), cmp);
        }
    }
}

/// GPUs of the innermost tier (a node's NVLink domain) inside a group of `group` GPUs.
int nodeRanks(const System& sys, int group) {
    const int node = sys.tiers.empty() ? sys.gpusPerNode : sys.tiers.front().gpus;
    return std::max(1, std::min(group, node));
}

} // namespace

namespace {

/// What every table's placement reads: the group, its batch and the placement's cost rates.
struct PlacementContext {
    const Workload& w;
    const DlrmPlan& plan;
    int N = 1, G = 1, R = 1;
    double Bg = 0, b = 0;      ///< the group's batch, one GPU's batch
    double hbm = 0;            ///< effective HBM bytes/s
    double a2aPerByte = 0;     ///< seconds per byte of an all-to-all send buffer on the group
    int nl = 1, nodes = 1;     ///< GPUs of the group per node, and its nodes
};

/// One table group's shards and per-rank loads, by its sharding type.
void placeTableGroup(const PlacementContext& c, const EmbeddingTableGroup& tab, EmbSharding type,
                     DlrmPlacement& p, std::vector<Shard>& tw, std::vector<Shard>& twrw) {
    const Workload& w = c.w;
    const int G = c.G, nl = c.nl;
    const double Bg = c.Bg, b = c.b;
    const double e = tab.bytesPerElement, dim = tab.dim, rows = double(tab.rows);
    const double lookups = Bg * tab.pooling; // per table, this group's batch
    const double optRow = optimizerBytesPerRow(w.embOptimizer, dim);
    // One embedding module per table: its gradient passes, besides the fused update's.
    auto eager = [&](double sd) {
        return c.plan.perTableKernels ? eagerGradientBytesPerLookup(w.embOptimizer, sd, e) : 0.0;
    };
    const double eagerPerLookup = eager(dim);
    const double bwdPerLookup = 2.0 * rowBytes(dim, e) +
                                optimizerBytesPerLookup(w.embOptimizer, dim) + kSortBytes +
                                eagerPerLookup;
    switch (type) {
    case EmbSharding::TableWise:
    case EmbSharding::ColumnWise: {
        const int k = type == EmbSharding::ColumnWise ? columnShards(tab.dim, G) : 1;
        const double sd = dim / k;
        Shard sh;
        sh.lookupB = lookups * rowBytes(sd, e);
        sh.eagerB = lookups * eager(sd);
        sh.bwdB = lookups * (2.0 * rowBytes(sd, e) + optimizerBytesPerLookup(w.embOptimizer, sd) +
                             kSortBytes) +
                  Bg * sd * e + sh.eagerB;
        sh.sendB = Bg * sd * e;
        sh.optB = rows * (type == EmbSharding::ColumnWise &&
                                  w.embOptimizer == EmbOptimizer::RowwiseAdagrad
                              ? optRow
                              : optimizerBytesPerRow(w.embOptimizer, sd));
        sh.memB = rows * sd * e + sh.optB;
        // Rows read, the pooled output written, the backward; the output sent and back.
        sh.costS = (sh.lookupB + sh.sendB + sh.bwdB) / c.hbm + 2.0 * sh.sendB * c.a2aPerByte;
        for (int i = 0; i < tab.count * k; ++i)
            tw.push_back(sh);
        p.a2aRecvB += double(tab.count) * b * dim * e;
        break;
    }
    case EmbSharding::RowWise: {
        p.uniform.lookupB += tab.count * lookups * rowBytes(dim, e) / G;
        p.uniform.bwdB += tab.count * (lookups * bwdPerLookup + Bg * dim * e) / G;
        p.uniform.eagerB += tab.count * lookups * eagerPerLookup / G;
        p.uniform.optB += tab.count * rows * optRow / G;
        p.uniform.memB += tab.count * rows * (dim * e + optRow) / G;
        p.rwPooledB += tab.count * Bg * dim * e; // reduce-scatter buffer (partial sums)
        p.idsB += tab.count * b * tab.pooling * kIdBytes;
        break;
    }
    case EmbSharding::TableRowWise: {
        Shard sh; // one table on one node, its rows split over the node's ranks
        sh.lookupB = lookups * rowBytes(dim, e) / nl;
        sh.bwdB = (lookups * bwdPerLookup + Bg * dim * e) / nl;
        sh.eagerB = lookups * eagerPerLookup / nl;
        sh.sendB = Bg * dim * e; // the node's reduce-scatter buffer for this table
        sh.optB = rows * optRow / nl;
        sh.memB = rows * dim * e / nl + sh.optB;
        sh.costS = (sh.lookupB + sh.sendB + sh.bwdB) / c.hbm; // + its partial sums written
        for (int i = 0; i < tab.count; ++i)
            twrw.push_back(sh);
        p.idsB += tab.count * b * tab.pooling * kIdBytes;
        break;
    }
    case EmbSharding::DataParallel: {
        p.uniform.lookupB += tab.count * b * tab.pooling * rowBytes(dim, e);
        p.uniform.bwdB += tab.count * (b * tab.pooling * bwdPerLookup + b * dim * e);
        p.uniform.eagerB += tab.count * b * tab.pooling * eagerPerLookup;
        p.uniform.optB += tab.count * rows * optRow;
        p.uniform.memB += tab.count * rows * (dim * e + optRow);
        p.dpTableGradB += tab.count * rows * dim * 4.0; // dense fp32 gradients
        p.dpPooledB += tab.count * b * dim * e;
        break;
    }
    }
    // 2-D: the rows this group touched, synchronised with the other replicas' (DP tables are
    // already replicated everywhere and reduced over all GPUs).
    if (c.R > 1 && type != EmbSharding::DataParallel)
        p.replicaSyncB += tab.count * std::min(lookups, rows) * dim * 4.0 / G;
}

/// The table-wise shards on the group's ranks and the TWRW tables on its nodes: the critical
/// (most loaded) rank and node, and the fullest.
void placeOnRanks(const PlacementContext& c, double budget, std::vector<Shard>& tw,
                  std::vector<Shard>& twrw, DlrmPlacement& p) {
    const int G = c.G, nodes = c.nodes;
    std::vector<RankLoad>& loads = tLoads;
    placeShards(tw, loads, G, budget);
    // The critical rank: the most loaded by its placement cost.
    int crit = 0;
    double memMax = 0, memSum = 0;
    for (int r = 0; r < G; ++r) {
        if (loads[r].costS > loads[crit].costS) crit = r;
        memMax = std::max(memMax, loads[r].memB);
        memSum += loads[r].memB;
    }
    p.critical = loads.empty() ? RankLoad{} : loads[crit];
    double lookupSum = 0;
    for (const auto& l : loads)
        lookupSum += l.lookupB;
    p.meanLookupB = G > 0 ? lookupSum / G : 0;
    p.twMemMaxB = memMax;
    p.twMemMeanB = G > 0 ? memSum / G : 0;
    // TWRW: tables placed on nodes; the critical node's ranks carry its share.
    thread_local std::vector<RankLoad> nodeLoads;
    placeShards(twrw, nodeLoads, nodes, budget); // shard bytes are per GPU of the node
    int critNode = 0;
    double nodeMem = 0;
    for (int n = 0; n < nodes; ++n) {
        if (nodeLoads[n].costS > nodeLoads[critNode].costS) critNode = n;
        nodeMem = std::max(nodeMem, nodeLoads[n].memB);
    }
    p.twrwNode = nodes > 0 && !twrw.empty() ? nodeLoads[critNode] : RankLoad{};
    p.twrwMemMaxB = twrw.empty() ? 0.0 : nodeMem;
}

/// Each sharding's collectives on the tiers its group spans (per step: forward and backward).
void placementCollectives(const System& sys, const PlacementContext& c, bool hasTwrw,
                          DlrmPlacement& p) {
    const int N = c.N, G = c.G, R = c.R, nl = c.nl, nodes = c.nodes;
    const GroupLayout group = layoutGroup(sys, G, 1);
    const GroupLayout node = layoutGroup(sys, nl, 1);
    const GroupLayout acrossNodes = layoutGroup(sys, nodes, nl);
    const GroupLayout all = layoutGroup(sys, N, 1);
    const GroupLayout replicas = layoutGroup(sys, R, G);
    const double a2aBuf = std::max(p.critical.sendB, p.a2aRecvB);
    p.a2aS = G > 1 && a2aBuf > 0 ? collectiveTime(sys, group, Collective::AllToAll, a2aBuf) : 0.0;
    p.rwS = G > 1 && p.rwPooledB > 0
                ? collectiveTime(sys, group, Collective::ReduceScatter, p.rwPooledB)
                : 0.0;
    p.idsS = G > 1 && p.idsB > 0 ? collectiveTime(sys, group, Collective::AllToAll, p.idsB) : 0.0;
    if (hasTwrw) {
        // Reduce-scatter of each table's partial sums over the node (NVLink), then the pooled
        // outputs all-to-all across nodes: a rank sends its 1/nl of its node's tables.
        const double nodePooled = p.twrwNode.sendB;
        p.twrwNodeS =
            nl > 1 ? collectiveTime(sys, node, Collective::ReduceScatter, nodePooled) : 0.0;
        p.twrwA2aS = nodes > 1
                         ? collectiveTime(sys, acrossNodes, Collective::AllToAll, nodePooled / nl)
                         : 0.0;
    }
    p.replicaSyncS = R > 1 && p.replicaSyncB > 0
                         ? collectiveTime(sys, replicas, Collective::AllReduce, p.replicaSyncB)
                         : 0.0;
    p.dpTableSyncS = N > 1 && p.dpTableGradB > 0
                         ? collectiveTime(sys, all, Collective::AllReduce, p.dpTableGradB)
                         : 0.0;
}

} // namespace

DlrmPlacement dlrmPlacement(const Scenario& s) {
    const DlrmShape& d = s.model.dlrm;
    const DlrmPlan& plan = s.strategy.dlrm;
    const System& sys = s.system;
    PlacementContext c{s.workload, plan};
    c.N = s.gpus;
    c.G = plan.groupSize > 0 ? plan.groupSize : c.N;
    c.R = c.N / c.G;
    c.Bg = double(s.workload.globalBatch) / c.R;
    c.b = double(s.workload.globalBatch) / c.N;
    c.hbm = sys.gpu.hbmBytesPerS * sys.gpu.calibration.memoryEfficiency;
    // Seconds per byte of an all-to-all send buffer on this group, for placement costs only.
    c.a2aPerByte =
        c.G > 1 ? collectiveTime(sys, layoutGroup(sys, c.G, 1), Collective::AllToAll, 1e9) / 1e9
                : 0.0;
    c.nl = nodeRanks(sys, c.G);
    c.nodes = c.G / c.nl;
    DlrmPlacement p;
    p.group = c.G;
    p.replicas = c.R;
    std::vector<Shard>& tw = tShards;
    tw.clear();
    thread_local std::vector<Shard> twrwShards;
    twrwShards.clear();
    for (std::size_t t = 0; t < d.tables.size(); ++t) {
        const EmbSharding type = c.G == 1 && plan.sharding[t] != EmbSharding::DataParallel
                                     ? EmbSharding::TableWise
                                     : plan.sharding[t];
        placeTableGroup(c, d.tables[t], type, p, tw, twrwShards);
    }
    // Tables must fit beside what else the GPU holds: budget the HBM less the reserve.
    const double budget = std::max(0.0, sys.gpu.hbmBytes - sys.reserveBytes);
    placeOnRanks(c, budget, tw, twrwShards, p);
    placementCollectives(sys, c, !twrwShards.empty(), p);
    return p;
}

MemoryBreakdown dlrmMemory(const Scenario& s, const DlrmPlacement& p) {
    const DlrmShape& d = s.model.dlrm;
    const Workload& w = s.workload;
    MemoryBreakdown m;
    const double pB = bytesPerElement(w.precision);
    const double dense = d.denseParams();
    const double trained = trainableDenseParams(d, w.frozen); // gradients and optimizer state
    const double b = double(w.globalBatch) / s.gpus;
    const double tables = std::max(p.critical.memB, p.twMemMaxB) + p.uniform.memB + p.twrwMemMaxB;
    const double tableOpt = p.critical.optB + p.uniform.optB + p.twrwNode.optB;
    m.weightsBytes = dense * pB + (tables - tableOpt);
    m.gradsBytes = trained * std::max(pB, bytesPerElement(w.gradReducePrecision));
    m.optimizerBytes = (w.optimizer == Optimizer::Adam ? (pB < 4 ? 12.0 : 8.0) : 0.0) * trained +
                       (w.frozen.embedding ? 0.0 : tableOpt); // frozen tables keep no state
    // Activations of the local batch: every MLP layer's output twice (pre- and post-ReLU),
    // the pooled features and the interaction output; plus the lookup outputs of the shards
    // this GPU serves (the whole group's batch) and the all-to-all buffers.
    double widths = 0;
    for (auto v : d.bottomMlp)
        widths += double(v);
    for (auto v : d.topMlp)
        widths += double(v) * (d.topExperts > 0 ? d.topK : 1);
    const double F = d.featureCount();
    double inter = d.interactionOutput();
    if (d.interaction == DlrmInteraction::Dot) inter += F * F;
    if (d.interaction == DlrmInteraction::Dcnv2) inter *= 2.0 * std::max(1, d.dcnLayers);
    if (d.interaction == DlrmInteraction::Transformer)
        inter *= 16.0 * std::max(1, d.transformerLayers);
    m.activationsBytes = b * (2.0 * widths + inter) * pB + 2.0 * (p.critical.sendB + p.a2aRecvB) +
                         p.rwPooledB + p.twrwNode.sendB;
    m.reserveBytes = s.system.reserveBytes;
    m.capacityBytes = s.system.gpu.hbmBytes;
    return m;
}

MemoryBreakdown dlrmMemory(const Scenario& s) {
    return dlrmMemory(s, dlrmPlacement(s));
}

std::optional<std::string> explainInvalidDlrm(const Scenario& s) {
    auto str = [](long long v) { return std::to_string(v); };
    const DlrmShape& d = s.model.dlrm;
    const Strategy& st = s.strategy;
    const Workload& w = s.workload;
    if (w.kind == WorkloadKind::Inference)
        return "DLRM serving is not modelled by the native engine: set workload.kind to "
               "\"training\", or evaluate the seed's DLRM inference files with --engine "
               "reference";
    if (d.tables.empty()) return "model.dlrm.tables must list at least one table group";
    if (int(d.tables.size()) > kMaxTableGroups)
        return "model.dlrm.tables has " + str(long(d.tables.size())) + " groups; at most " +
               str(kMaxTableGroups) + " (list identical tables as one group with a count)";
    if (d.topMlp.empty()) return "model.dlrm.top_mlp must have at least one layer";
    if (w.inputReadBytesPerS > 0 && s.system.hostLinkBytesPerS <= 0)
        return "workload.input_read_gbps needs system.host_link_gbps, each GPU's link to host "
               "memory per direction (PCIe Gen3 x16: 15.75; Gen5 x16: 63): the batch crosses it";
    if (s.gpus < 1) return "gpus must be at least 1";
    if (s.gpus > s.system.maxGpus())
        return "gpus (" + str(s.gpus) + ") exceeds the " + str((long long)s.system.maxGpus()) +
               " GPUs of the system's outermost tier";
    for (auto [name, v] : {std::pair{"tp", st.tp},
                           {"pp", st.pp},
                           {"cp", st.cp},
                           {"vp", st.vp},
                           {"ep", st.ep},
                           {"etp", st.etp}})
        if (v != 1)
            return "strategy." + std::string(name) + " = " + str(v) +
                   ": a DLRM's dense part is data-parallel over every GPU and its tables follow "
                   "strategy.emb_sharding; set " +
                   name + " to 1";
    if (st.dp != s.gpus)
        return "strategy.dp (" + str(st.dp) + ") must equal the GPU count (" + str(s.gpus) +
               "): a DLRM's dense part is data-parallel over every GPU";
    if (st.zeroStage != 0 && st.zeroStage != 1)
        return "strategy.zero_stage " + str(st.zeroStage) +
               " is not modelled for DLRM (its dense part is small): use 0";
    if (st.fsdpStyle != FsdpStyle::Overlapped)
        return std::string("strategy.fsdp_style \"deepspeed-legacy\" describes ZeRO-3, which is "
                           "not modelled for DLRM: set it to \"overlapped\"");
    if (st.dlrm.listed > 0 && st.dlrm.listed != int(d.tables.size()))
        return "strategy.emb_sharding lists " + str(st.dlrm.listed) + " types for " +
               str(long(d.tables.size())) +
               " table groups: give one per group, or a single type for all";
    const int G = st.dlrm.groupSize > 0 ? st.dlrm.groupSize : s.gpus;
    if (G > s.gpus || s.gpus % G != 0)
        return "strategy.emb_group_size (" + str(G) + ") must divide the " + str(s.gpus) +
               " GPUs (2-D sparse parallelism replicates the group's shards across the rest)";
    if (w.globalBatch < 1 || w.globalBatch % s.gpus != 0)
        return "workload.global_batch (" + str(w.globalBatch) + ") must be a multiple of the " +
               str(s.gpus) + " GPUs (each GPU trains an equal share of the samples)";
    const std::int64_t h = d.bottomMlp.empty() ? d.denseFeatures : d.bottomMlp.back();
    if (d.interaction != DlrmInteraction::Dcnv2)
        for (std::size_t t = 0; t < d.tables.size(); ++t)
            if (d.tables[t].dim != h)
                return "model.dlrm.tables[" + str(long(t)) + "].dim (" + str(d.tables[t].dim) +
                       ") differs from the bottom MLP's output (" + str(h) + "): the " +
                       std::string(toString(d.interaction)) +
                       " interaction needs equal widths; make them equal or use \"dcnv2\"";
    if (d.interaction == DlrmInteraction::Transformer &&
        (d.transformerHeads < 1 || d.transformerLayers < 1 || h % d.transformerHeads != 0))
        return "model.dlrm: a transformer interaction needs transformer_layers ≥ 1 and "
               "transformer_heads ≥ 1 dividing the feature width " +
               str(h);
    const int node = s.system.tiers.empty() ? s.system.gpusPerNode : s.system.tiers.front().gpus;
    for (std::size_t t = 0; t < d.tables.size(); ++t) {
        const EmbSharding k = st.dlrm.sharding[t];
        if (k == EmbSharding::TableRowWise && G > node && G % node != 0)
            return "strategy.emb_sharding[" + str(long(t)) + "] = \"twrw\" needs the group (" +
                   str(G) + " GPUs) to be whole nodes of " + str(node) +
                   "; choose emb_group_size a multiple of " + str(node) + " or another type";
        if (k == EmbSharding::RowWise && d.tables[t].rows < G)
            return "strategy.emb_sharding[" + str(long(t)) + "] = \"rw\" splits " +
                   str(d.tables[t].rows) + " rows over " + str(G) +
                   " GPUs, fewer than one each; use \"tw\" or \"dp\" for this table";
    }
    return std::nullopt;
}

} // namespace detail

} // namespace madmax
