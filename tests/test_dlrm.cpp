// DLRM (issue #11): a two-table model on the toy hardware of test_hand_derived.cpp (100 TFLOP/s
// at efficiency 0.5, 1 TB/s HBM at efficiency 1, no launch cost or latency, 100 GB/s NVLink in
// nodes of 8, 10 GB/s network). Each expected number is worked out in the comment above it from
// docs/developer/workloads.md "DLRM", not read off the code; invariants and bad inputs follow.
#include "madmax/dlrm.hpp"
#include "madmax/dlrm_search.hpp"
#include "madmax/engine.hpp"
#include "madmax/error.hpp"
#include "madmax/report.hpp"
#include "madmax/scenario_io.hpp"
#include "madmax/search.hpp"
#include "madmax/validation.hpp"
#include "test_support.hpp"
#include "dlrm/dlrm_engine.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace madmax;
using nlohmann::json;
using Catch::Matchers::Contains;

namespace {

// Table A: 1000 rows, dim 64, fp32, 2 lookups per sample; table B: 100 rows, dim 64, fp32, one
// lookup. Rows are 256 B (four 64-byte lines). Bottom MLP 16 → 64, top MLP → 1, dot interaction.
// SGD for the tables: no optimizer state.
const json kToyDlrm = [] {
    json doc = json::parse(R"({
  "schema": "madmax-scenario/1",
  "name": "toy dlrm",
  "model": {"id": "toy-dlrm", "arch": "dlrm",
            "dlrm": {"dense_features": 16, "bottom_mlp": [64], "top_mlp": [1],
                     "interaction": "dot",
                     "tables": [{"name": "A", "rows": 1000, "dim": 64, "pooling": 2},
                                {"name": "B", "rows": 100, "dim": 64, "pooling": 1}]}},
  "gpus": 2,
  "strategy": {"dp": 2, "emb_sharding": "tw"},
  "workload": {"kind": "training", "global_batch": 1024, "precision": "bf16",
               "optimizer": "sgd", "emb_optimizer": "sgd"}
})");
    doc["system"] = test::toySystem(); // the shared toy hardware
    return doc;
}();

Scenario toy(const std::vector<std::pair<std::string, json>>& edits = {}) {
    json doc = kToyDlrm;
    for (const auto& [path, value] : edits)
        applyOverride(doc, path, value, "toy");
    return parseScenario(doc, "toy");
}

std::string errorFor(const std::vector<std::pair<std::string, json>>& edits) {
    try {
        toy(edits);
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}

/// The error loading the default (transformer) preset with this override gives.
std::string defaultPresetError(const std::string& override) {
    try {
        test::preset("default", {override});
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}

} // namespace

TEST_CASE("DLRM hand-derived: the dense part's FLOPs and parameters") {
    const DlrmShape& d = toy().model.dlrm;
    // Bottom 2·16·64 = 2048; dot over F = 3 features of 64: 2·3²·64 = 1152; the interaction
    // output is the bottom's 64 plus F(F−1)/2 = 3 dots = 67; top 2·67·1 = 134. Sum 3334.
    CHECK(d.featureCount() == 3);
    CHECK(d.interactionOutput() == 67.0);
    CHECK(d.denseForwardFlopsPerSample() == 3334.0);
    // Parameters: 16·64 + 64 = 1088 and 67·1 + 1 = 68: 1156; tables 1000·64 + 100·64 = 70,400.
    CHECK(d.denseParams() == 1156.0);
    CHECK(d.tableParams() == 70400.0);
    // A mixture-of-experts top MLP (2 experts, top 2): each sample runs the top MLP in k = 2
    // experts, 2 · 134, and the router 2 · 67 · 2 = 268: 3,200 + 268 + 268 = 3,736.
    const DlrmShape& e = toy({{"model.dlrm.top_experts", 2}, {"model.dlrm.top_k", 2}}).model.dlrm;
    CHECK(e.denseForwardFlopsPerSample() == 3736.0);
    // Its parameters: the bottom MLP's 1,088, each expert's top MLP 68 (× 2), the router's
    // 67 × 2 weights: 1,358.
    CHECK(e.denseParams() == 1358.0);
}

TEST_CASE("DLRM hand-derived: the dense activations follow the dense precision") {
    // Per sample the MLPs keep each layer's output twice (pre- and post-ReLU), 2 · (64 + 1), and
    // the dot interaction its output with the F² scores, 67 + 9 = 76: 206 elements, for 512
    // samples a GPU. From bf16 to fp32 they grow by 512 · 206 · 2 B = 210,944 B; the tables'
    // lookup and all-to-all buffers keep the tables' own fp32 and do not move.
    const double bf16 = evaluate(toy()).memory.activationsBytes;
    const double fp32 = evaluate(toy({{"workload.precision", "fp32"},
                                      {"system.gpu.peak_tflops.fp32", 50}}))
                            .memory.activationsBytes;
    CHECK(fp32 - bf16 == Approx(210944.0));
}

TEST_CASE("DLRM hand-derived: table-wise lookups, backward and pooled all-to-all") {
    const Result r = evaluate(toy());
    const DlrmResult& x = r.dlrmResult;
    REQUIRE(x.active);
    // Two GPUs, one group; each table on one GPU, the larger (A) alone on the critical one.
    // A's lookups: the group's 1024 samples × 2 × 256 B = 524,288 B of rows read, and the pooled
    // output written, one 64 × 4 B vector per sample: 262,144 B. 786,432 B → 7.86432e-7 s at
    // 1 TB/s.
    CHECK(x.lookupBytesCritical == Approx(524288.0));
    CHECK(x.lookupFwdS == Approx(7.86432e-7).epsilon(1e-9));
    // Backward with the fused SGD update: per lookup a row read and written (512 B) and the
    // 64-byte radix-sort share, 2048 · 576 = 1,179,648 B, plus the pooled gradients read,
    // 1024 · 64 · 4 = 262,144 B: 1,441,792 B → 1.441792e-6 s.
    CHECK(x.embBackwardS == Approx(1.441792e-6).epsilon(1e-9));
    // Pooled all-to-all: A's outputs for all 1024 samples, 1024·64·4 = 262,144 B, equal to what
    // each GPU receives (its 512 samples × both tables' 64 fp32); half crosses NVLink:
    // 131,072 B / 100 GB/s = 1.31072e-6 s each way.
    CHECK(x.a2aFwdS == Approx(1.31072e-6).epsilon(1e-9));
    CHECK(x.a2aBwdS == Approx(1.31072e-6).epsilon(1e-9));
    // The fullest GPU holds table A: 1000 · 64 · 4 = 256,000 B.
    CHECK(x.tableBytesCritical == Approx(256000.0));
    // A carries 2/3 of all lookup bytes: critical ÷ mean = 524,288 / 393,216 = 4/3.
    CHECK(x.imbalance == Approx(4.0 / 3.0));
    // What the compute stream waits for: the pooled all-to-all runs while the bottom MLP does.
    // Bottom MLP forward on 512 samples, 16 → 64: the GEMM is memory-bound (16·64 + 512·16 +
    // 512·64 bf16 elements = 83,968 B → 8.3968e-8 s against 2.1e-8 s of FLOPs), bias + ReLU
    // 2·512·64·2 = 131,072 B → 1.31072e-7 s: 2.1504e-7 s. Its backward: the weight gradient
    // only (the dense features need no gradient), one GEMM pass, and bias + ReLU twice:
    // 8.3968e-8 + 2.62144e-7 = 3.46112e-7 s. Exposed:
    // (1.31072e-6 − 2.1504e-7) + (1.31072e-6 − 3.46112e-7) = 2.060288e-6 s.
    CHECK(x.sparseExposedS == Approx(2.060288e-6).epsilon(1e-6));
}

TEST_CASE("DLRM hand-derived: eager per-table modules copy what a fused table kernel does not") {
    // One nn.Embedding(sparse=True) per table with torch.optim.SGD (the 2020 PyTorch DLRM
    // example, model.py and main.py): the same rows are read and updated as by the fused
    // kernel, plus
    //  - backward, each table's gradient slice made contiguous as the sparse gradient's values
    //    and SGD's add_ scaling those by -lr into a new tensor, each pass a read and a write of
    //    64 × 4 B per lookup: on A's GPU 2048 lookups × 1024 B = 2,097,152 B, beside the fused
    //    1,441,792 B above: 3,538,944 B → 3.538944e-6 s at 1 TB/s;
    //  - forward, torch.cat of the bottom output (64 bf16) and the two pooled lookups (64 fp32
    //    each) into the interaction's input for the GPU's 512 samples: read 512·(64·2 + 128·4)
    //    = 327,680 B, written in fp32 512·192·4 = 393,216 B: 720,896 B → 7.20896e-7 s more
    //    interaction time. Lookups themselves are unchanged.
    const DlrmResult fused = evaluate(toy()).dlrmResult;
    const Result r = evaluate(toy({{"strategy.emb_kernels", "per_table"}}));
    const DlrmResult& eager = r.dlrmResult;
    CHECK(eager.embBackwardS == Approx(3.538944e-6).epsilon(1e-9));
    CHECK(eager.interactionS - fused.interactionS == Approx(7.20896e-7).epsilon(1e-6));
    CHECK(eager.lookupFwdS == Approx(fused.lookupFwdS));
    // The report says what the copies cost, inside the interaction and backward lines:
    // 2,097,152 + 720,896 B → 2.818048e-6 s; a fused kernel has none.
    CHECK(eager.eagerCopiesS == Approx(2.818048e-6).epsilon(1e-6));
    CHECK(fused.eagerCopiesS == 0.0);
    CHECK_THAT(formatReport(toy({{"strategy.emb_kernels", "per_table"}}), r),
               Contains("incl. per-table copies"));
    CHECK_THAT(formatReport(toy(), evaluate(toy())), !Contains("per-table copies"));
    // Adam keeps its states' passes unpriced, but the contiguous copy stays: 2048 · 512 B more
    // than Adam's fused backward.
    const DlrmResult adamFused = evaluate(toy({{"workload.emb_optimizer", "adam"}})).dlrmResult;
    const DlrmResult adamEager = evaluate(toy({{"workload.emb_optimizer", "adam"},
                                               {"strategy.emb_kernels", "per_table"}}))
                                     .dlrmResult;
    CHECK(adamEager.embBackwardS - adamFused.embBackwardS == Approx(1.048576e-6).epsilon(1e-6));
}

TEST_CASE("DLRM: tables per GPU are those of the fullest GPU, not of the most loaded one") {
    // Regression: the report's "tables per GPU … on the fullest" showed the critical rank's
    // tables. Table A shrunk to 10 rows (2,560 B) still carries two lookups a sample and makes
    // its GPU the most loaded; table B grown to 100,000 rows fills the other GPU with
    // 100,000 · 64 · 4 = 25,600,000 B.
    const DlrmResult x = evaluate(toy({{"model.dlrm.tables.0.rows", 10},
                                       {"model.dlrm.tables.1.rows", 100000}}))
                             .dlrmResult;
    CHECK(x.lookupBytesCritical == Approx(524288.0)); // A's GPU is still the critical one
    CHECK(x.tableBytesCritical == Approx(25600000.0));
    CHECK(x.tableBytesMean == Approx((2560.0 + 25600000.0) / 2.0));
}

TEST_CASE("DLRM placement: equal-cost tables go biggest first, so big ones do not pair up") {
    // Four one-hot tables of one width cost the same; two have 100,000 rows (25.6 MB each), two
    // 10 (2,560 B). Biggest first puts one big table on each GPU; by input order (big, small,
    // big, small) the second big table would join the first. Fullest GPU: 25,602,560 B.
    json doc = kToyDlrm;
    doc["model"]["dlrm"]["tables"] = json::array();
    for (int rows : {100000, 10, 100000, 10})
        doc["model"]["dlrm"]["tables"].push_back(
            {{"name", "T" + std::to_string(rows)}, {"rows", rows}, {"dim", 64}, {"pooling", 1}});
    const DlrmResult x = evaluate(parseScenario(doc, "four tables")).dlrmResult;
    CHECK(x.tableBytesCritical == Approx(25602560.0));
}

TEST_CASE("DLRM hand-derived: a short row costs a whole 64-byte line") {
    // Table B at dim 4 (16-byte fp32 rows; a DCNv2 interaction allows unequal widths): each of
    // its 1024 lookups still moves a 64-byte line, 65,536 B, not 16,384. Mean over the two
    // GPUs: (524,288 + 65,536) / 2 = 294,912 B.
    const DlrmResult x = evaluate(toy({{"model.dlrm.interaction", "dcnv2"},
                                       {"model.dlrm.dcn_layers", 1},
                                       {"model.dlrm.tables.1.dim", 4}}))
                             .dlrmResult;
    CHECK(x.lookupBytesMean == Approx(294912.0));
}

TEST_CASE("DLRM hand-derived: row-wise splits lookups and reduce-scatters partial sums") {
    const DlrmResult x = evaluate(toy({{"strategy.emb_sharding", "rw"}})).dlrmResult;
    // Every GPU looks up its half of each table's rows for all 1024 samples:
    // (1024·2·256 + 1024·1·256) / 2 = 393,216 B.
    CHECK(x.lookupBytesCritical == Approx(393216.0));
    // Partial sums: a reduce-scatter of both tables' 1024 × 64 fp32 outputs (524,288 B) over 2
    // GPUs, half crossing NVLink: 2.62144e-6 s; the backward all-gather the same.
    CHECK(x.rowwiseCommS == Approx(2.0 * 2.62144e-6).epsilon(1e-9));
    // Ids to their owners: each GPU's 512 samples × 3 lookups × 8 B = 12,288 B all-to-all,
    // half crossing: 6.144e-8 s.
    CHECK(x.idsA2aS == Approx(6.144e-8).epsilon(1e-9));
    CHECK(x.a2aFwdS == 0.0);
    // The lookup writes the partial sums it pools: both tables' 1024 × 64 fp32 (524,288 B),
    // with the 393,216 B of rows read: 917,504 B → 9.17504e-7 s at 1 TB/s.
    CHECK(x.lookupFwdS == Approx(9.17504e-7).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: data-parallel tables all-reduce their whole gradients") {
    const DlrmResult x = evaluate(toy({{"strategy.emb_sharding", "dp"}})).dlrmResult;
    // Local lookups only: 512 · 2 · 256 + 512 · 256 = 393,216 B.
    CHECK(x.lookupBytesCritical == Approx(393216.0));
    // Dense fp32 gradients of both tables, (1000 + 100) · 64 · 4 = 281,600 B, ring all-reduce
    // over 2: 2·(1/2)·281,600 / 1e11 = 2.816e-6 s.
    CHECK(x.dpTableSyncS == Approx(2.816e-6).epsilon(1e-9));
    // Every GPU holds both tables: 70,400 · 4 = 281,600 B.
    CHECK(x.tableBytesCritical == Approx(281600.0));
    // The lookup writes its local batch's pooled outputs, 512 samples × 2 tables × 64 fp32 =
    // 262,144 B, beside the 393,216 B read: 655,360 B → 6.5536e-7 s.
    CHECK(x.lookupFwdS == Approx(6.5536e-7).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: Adam keeps 8 bytes per dense parameter in fp32, 12 in mixed "
          "precision") {
    // Adam's two fp32 moments, plus an fp32 master copy when the weights are in 16 bits
    // (docs/developer/workloads.md "DLRM", memory). The tables stay on SGD (no state), so the
    // optimizer holds the 1,156 dense parameters' state only: 8 · 1,156 = 9,248 B in fp32,
    // 12 · 1,156 = 13,872 B in bf16.
    const Result fp32 = evaluate(toy({{"workload.optimizer", "adam"},
                                      {"system.gpu.peak_tflops.fp32", 100},
                                      {"workload.precision", "fp32"}}));
    const Result bf16 = evaluate(toy({{"workload.optimizer", "adam"}}));
    CHECK(fp32.memory.optimizerBytes == Approx(9248.0));
    CHECK(bf16.memory.optimizerBytes == Approx(13872.0));
}

TEST_CASE("DLRM hand-derived: 2-D sparse parallelism syncs the touched rows across replicas") {
    // Groups of one GPU, two replicas: each GPU holds every table and serves its own 512
    // samples (lookups as DP: 393,216 B). Across replicas the rows each touched are reduced:
    // A min(1024 lookups, 1000 rows) = 1000, B min(512, 100) = 100 rows of 64 fp32:
    // 281,600 B all-reduced over 2 = 2.816e-6 s.
    const DlrmResult x = evaluate(toy({{"strategy.emb_group_size", 1}})).dlrmResult;
    CHECK(x.replicas == 2);
    CHECK(x.lookupBytesCritical == Approx(393216.0));
    CHECK(x.replicaSyncS == Approx(2.816e-6).epsilon(1e-9));
    CHECK(x.a2aFwdS == 0.0);
}

TEST_CASE("DLRM invariants: one 2-D group equals plain sharding, row-wise never out-loads "
          "table-wise, more bandwidth is never slower, pipelining never slower") {
    for (const char* type : {"tw", "rw", "cw", "dp"}) {
        INFO(type);
        const Result plain = evaluate(toy({{"strategy.emb_sharding", type}}));
        const Result oneGroup =
            evaluate(toy({{"strategy.emb_sharding", type}, {"strategy.emb_group_size", 2}}));
        CHECK(oneGroup.stepTimeS == plain.stepTimeS);
        CHECK(oneGroup.memory.totalBytes() == plain.memory.totalBytes());
        const Result piped =
            evaluate(toy({{"strategy.emb_sharding", type}, {"strategy.sparse_pipeline", true}}));
        CHECK(piped.stepTimeS <= plain.stepTimeS);
        Scenario fast = toy({{"strategy.emb_sharding", type}});
        fast.system.gpu.hbmBytesPerS *= 2;
        for (auto& t : fast.system.tiers)
            t.bytesPerS *= 2;
        CHECK(evaluate(fast).stepTimeS <= plain.stepTimeS);
    }
    // Row-wise lookups per GPU never exceed table-wise's most loaded GPU, on the MLPerf model
    // at any group size (the rows are spread evenly; tables are not).
    Scenario mlperf = test::preset("dlrm-dcnv2-64-h100", {});
    for (auto& t : mlperf.model.dlrm.tables) // row-wise needs a row per GPU (memory only)
        t.rows = std::max<std::int64_t>(t.rows, 64);
    for (int g : {8, 16, 32, 64}) {
        Scenario tw = mlperf, rw = mlperf;
        tw.strategy.dlrm.sharding.fill(EmbSharding::TableWise);
        rw.strategy.dlrm.sharding.fill(EmbSharding::RowWise);
        tw.strategy.dlrm.groupSize = rw.strategy.dlrm.groupSize = g;
        REQUIRE_FALSE(explainInvalid(rw));
        CHECK(evaluate(rw).dlrmResult.lookupBytesCritical <=
              evaluate(tw).dlrmResult.lookupBytesCritical);
    }
}

TEST_CASE("DLRM hand-derived: eager launches bound the step by the host's kernel count") {
    // One GPU, the toy model, 100 µs a launch: every segment's GPU time (well under a µs a
    // kernel on the toy hardware) hides behind the host, so the step is the kernel count ×
    // 100 µs (docs/reference/scenario.md "The host launch bound", DLRM). Fused tables, counted from its list:
    // inputs 4; bottom MLP forward 3 (one layer); gather 1; dot interaction 5; top MLP 3 + loss
    // 2; top backward 6 + loss 1; interaction backward 5; bottom backward 6 − 1 (the features
    // take no gradient); sort + fused backward-update 2; updates and gradient zeroing 4 per
    // layer, 8; the loss read back 1. Total 46: 4.6 ms.
    const std::vector<std::pair<std::string, json>> oneGpu = {
        {"gpus", 1}, {"strategy.dp", 1}, {"system.gpu.calibration.host_op_us", 100}};
    auto with = [&](std::vector<std::pair<std::string, json>> more) {
        auto e = oneGpu;
        e.insert(e.end(), more.begin(), more.end());
        return evaluate(toy(e));
    };
    const Result fused = with({});
    CHECK(fused.stepTimeS == Approx(46 * 100e-6).epsilon(1e-9));
    CHECK(fused.compute.hostStallS > 0);
    // The forward is its first 18 kernels (4 + 3 + 1 + 5 + 5): it ends when the last of them,
    // issued at 1.8 ms, has run; of that, all but the forward's few µs of GPU work is idle.
    CHECK(fused.compute.hostStallForwardS == Approx(18 * 100e-6).epsilon(0.01));
    CHECK(fused.compute.hostStallForwardS < 18 * 100e-6);
    CHECK(fused.stepTimeS == Approx(fused.computeS + fused.exposedCommS).epsilon(1e-12));
    // One module per table (the 2020 PyTorch examples): a gather per table (2, not 1), and per
    // table 3 backward + 3 SGD-update kernels (12, not 2): 46 − 1 + 2 − 2 + 12 = 57.
    CHECK(with({{"strategy.emb_kernels", "per_table"}}).stepTimeS ==
          Approx(57 * 100e-6).epsilon(1e-9));
    // Each optimizer state tensor adds a gather, an update and a scatter per table: row-wise
    // Adagrad (one state) 57 + 2·3 = 63, Adam (two) 57 + 2·6 = 69.
    CHECK(with({{"strategy.emb_kernels", "per_table"}, {"workload.emb_optimizer", "rowwise_adagrad"}})
              .stepTimeS == Approx(63 * 100e-6).epsilon(1e-9));
    CHECK(with({{"strategy.emb_kernels", "per_table"}, {"workload.emb_optimizer", "adam"}})
              .stepTimeS == Approx(69 * 100e-6).epsilon(1e-9));
    // Frozen tables send no gradients back and take no update: fused 46 − 2 = 44.
    CHECK(with({{"workload.frozen", json{{"embedding", true}}}}).stepTimeS ==
          Approx(44 * 100e-6).epsilon(1e-9));
    // CUDA graphs replay the step: no host bound; the GPU's own schedule is back.
    const Result graphs = with({{"strategy.cuda_graphs", true}});
    // A host far faster than the GPU (1 ns a launch against kernels of about a µs): the GPU
    // runs segment after segment, each as soon as the one before has run, waiting on the host
    // only for a few launches: the graph-replayed step, never less, to within 0.1%.
    const Result fastHost = with({{"system.gpu.calibration.host_op_us", 0.001}});
    CHECK(fastHost.stepTimeS >= graphs.stepTimeS);
    CHECK(fastHost.stepTimeS == Approx(graphs.stepTimeS).epsilon(1e-3));
    CHECK(graphs.compute.hostStallS == 0.0);
    CHECK(graphs.stepTimeS < 1e-4);
    CHECK(evaluate(toy({{"gpus", 1}, {"strategy.dp", 1}})).stepTimeS == graphs.stepTimeS);
    // The report and the timeline show the stall; the timeline still ends at the step.
    EvaluateOptions o;
    o.timeline = true;
    const Result t = evaluate(toy({{"gpus", 1}, {"strategy.dp", 1},
                                   {"system.gpu.calibration.host_op_us", 100}}), o);
    double end = 0, idle = 0;
    for (const auto& op : t.timeline) {
        end = std::max(end, op.endS);
        if (op.kind == TimelineKind::HostIdle) idle += op.endS - op.startS;
    }
    CHECK(end == Approx(t.stepTimeS).epsilon(1e-9));
    CHECK(idle == Approx(t.compute.hostStallS).epsilon(1e-9));
}

TEST_CASE("DLRM plan search keeps the scenario's embedding kernels") {
    // Regression: the search built each plan afresh and silently priced per-table scenarios
    // with fused kernels. Per-table and host-bound (100 µs a launch): every ranked plan keeps
    // per-table kernels, and its step is what evaluate gives for it.
    const Scenario base = toy({{"strategy.emb_kernels", "per_table"},
                               {"system.gpu.calibration.host_op_us", 100}});
    const DlrmSearchResult r = searchDlrmPlans(base);
    REQUIRE_FALSE(r.top.empty());
    for (const auto& c : r.top) {
        CHECK(c.plan.perTableKernels);
        Scenario s = base;
        s.strategy.dlrm = c.plan;
        CHECK(c.result.stepTimeS == evaluate(s).stepTimeS);
    }
}

TEST_CASE("DLRM host bound invariants: a faster host or GPU is never slower, per-table never "
          "faster than fused") {
    // The MLPerf model on 64 H100 at several per-GPU batches, where the host and the GPU trade
    // places as the bound.
    for (int batch : {4096, 65536, 1048576}) {
        for (const char* kernels : {"fused", "per_table"}) {
            INFO(batch << " " << kernels);
            Scenario s = test::preset("dlrm-dcnv2-64-h100", {});
            s.workload.globalBatch = batch;
            s.strategy.dlrm.perTableKernels = std::string(kernels) == "per_table";
            // (Equal up to rounding where the host is the bound: a relative 1e-12.)
            const double base = evaluate(s).stepTimeS * (1 + 1e-12);
            Scenario host = s, flops = s, hbm = s;
            host.system.gpu.calibration.hostOpS /= 2;
            for (double& v : flops.system.gpu.peakFlops)
                v *= 2;
            hbm.system.gpu.hbmBytesPerS *= 2;
            CHECK(evaluate(host).stepTimeS <= base);
            CHECK(evaluate(flops).stepTimeS <= base);
            CHECK(evaluate(hbm).stepTimeS <= base);
        }
        Scenario fused = test::preset("dlrm-dcnv2-64-h100", {}), per = fused;
        fused.workload.globalBatch = per.workload.globalBatch = batch;
        per.strategy.dlrm.perTableKernels = true;
        CHECK(evaluate(per).stepTimeS * (1 + 1e-12) >= evaluate(fused).stepTimeS);
    }
}

TEST_CASE("DLRM memory: tables that do not fit are flagged, sharding them makes them fit") {
    // The MLPerf model's 24 billion fp32 parameters (96 GB) cannot be replicated on an 80 GB
    // H100; table-wise over 64 GPUs they fit.
    Scenario s = test::preset("dlrm-dcnv2-64-h100", {});
    s.strategy.dlrm.sharding.fill(EmbSharding::DataParallel);
    CHECK_FALSE(peakMemory(s).fits());
    s.strategy.dlrm.sharding.fill(EmbSharding::TableWise);
    CHECK(peakMemory(s).fits());
    CHECK(peakMemory(s).totalBytes() == evaluate(s).memory.totalBytes());
}

TEST_CASE("DLRM bad inputs name the field and the fix") {
    CHECK_THAT(errorFor({{"model.dlrm.tables.1.dim", 32}}),
               Contains("tables[1].dim") && Contains("dcnv2"));
    CHECK_THAT(errorFor({{"strategy.emb_sharding", "xw"}}),
               Contains("strategy.emb_sharding") && Contains("tw, rw, cw, twrw, dp"));
    CHECK_THAT(errorFor({{"strategy.emb_sharding", json::array({"tw", "rw", "dp"})}}),
               Contains("3 types for 2 table groups"));
    CHECK_THAT(errorFor({{"strategy.emb_group_size", 3}}), Contains("emb_group_size"));
    CHECK_THAT(errorFor({{"strategy.emb_kernels", "per_row"}}),
               Contains("strategy.emb_kernels") && Contains("fused") && Contains("per_table"));
    CHECK_THAT(errorFor({{"strategy.emb_kernels", true}}), Contains("strategy.emb_kernels"));
    CHECK_THAT(errorFor({{"workload.seq_len", 128}}),
               Contains("workload.seq_len") && Contains("no sequence length"));
    CHECK_THAT(errorFor({{"strategy.tp", 2}}), Contains("strategy.tp"));
    CHECK_THAT(errorFor({{"model.dlrm.tables.0.rows", -5}}), Contains("tables[0].rows"));
    CHECK_THAT(errorFor({{"model.dlrm.tables.0.pooling", 0}}), Contains("tables[0].pooling"));
    CHECK_THAT(errorFor({{"model.dlrm.bottom_mlp", json::array({64, 1.5})}}),
               Contains("bottom_mlp[1]"));
    CHECK_THAT(errorFor({{"model.dlrm.top_experts", 2}, {"model.dlrm.top_k", 3}}),
               Contains("model.dlrm.top_k"));
    CHECK_THAT(errorFor({{"workload.global_batch", 1023}}), Contains("multiple of the 2 GPUs"));
    CHECK_THAT(errorFor({{"model.dlrm.tables.1.rows", 1}, {"strategy.emb_sharding", "rw"}}),
               Contains("fewer than one each"));
    CHECK_THAT(errorFor({{"model.dlrm.interaction", "cross"}}),
               Contains("model.dlrm.interaction"));
    CHECK_THAT(errorFor({{"model.dlrm.tabels", json::array()}}), Contains("tabels"));
    // A synchronous loader's batch crosses the host link: one must be given; rates are ≥ 0.
    CHECK_THAT(errorFor({{"workload.input_read_gbps", 2}}),
               Contains("workload.input_read_gbps") && Contains("system.host_link_gbps"));
    CHECK_THAT(errorFor({{"workload.input_read_gbps", -1}}), Contains("input_read_gbps"));
    CHECK_THAT(defaultPresetError("workload.input_read_gbps=2"),
               Contains("input_read_gbps") && Contains("DLRM workloads only"));
    CHECK_THAT(errorFor({{"workload.kind", "inference"}, {"workload.input_tokens", 1},
                         {"workload.output_tokens", 1}}),
               Contains("DLRM serving"));
    json many = json::array();
    for (int i = 0; i < 33; ++i)
        many.push_back({{"rows", 10}, {"dim", 64}});
    CHECK_THAT(errorFor({{"model.dlrm.tables", many}}), Contains("at most 32"));
    // The embedding plan on a transformer is refused, not ignored.
    CHECK_THAT(defaultPresetError("strategy.emb_sharding=rw"),
               Contains("apply to DLRM models only"));
}

TEST_CASE("Two embedding plans are equal only when every field and every group's sharding is") {
    // DlrmPlan compares its sharding types as one block of bytes: a difference in the last of
    // the kMaxTableGroups groups, or in any scalar, still makes the plans differ.
    const DlrmPlan base;
    CHECK(base == DlrmPlan{});
    DlrmPlan last = base;
    last.sharding[kMaxTableGroups - 1] = EmbSharding::RowWise;
    CHECK_FALSE(last == base);
    DlrmPlan first = base;
    first.sharding[0] = EmbSharding::ColumnWise;
    CHECK_FALSE(first == base);
    for (auto change : {+[](DlrmPlan& p) { p.groupSize = 8; },
                        +[](DlrmPlan& p) { p.pipelineSparse = true; },
                        +[](DlrmPlan& p) { p.perTableKernels = true; },
                        +[](DlrmPlan& p) { p.listed = 3; }}) {
        DlrmPlan other = base;
        change(other);
        CHECK_FALSE(other == base);
    }
}

TEST_CASE("DLRM hand-derived: a synchronous loader's read and copy add to the step") {
    // Each GPU reads its 512 samples as Criteo binary records: label, 16 dense features and 3
    // ids (table A pools 2, B 1), 4 B each = 80 B; 40,960 B off storage at 2 GB/s (2.048e-5 s)
    // and over an 8 GB/s host link (5.12e-6 s): 2.56e-5 s with the GPU idle (the DLRM examples'
    // April 2020 loop: DataLoader without workers, loss.item() every step).
    const Scenario prefetched = toy({{"system.host_link_gbps", 8}});
    const Scenario sync = toy({{"system.host_link_gbps", 8}, {"workload.input_read_gbps", 2}});
    EvaluateOptions o;
    o.timeline = true;
    const Result a = evaluate(prefetched), b = evaluate(sync, o);
    CHECK(b.dlrmResult.inputLoadS == Approx(2.56e-5).epsilon(1e-9));
    CHECK(b.stepTimeS - a.stepTimeS == Approx(2.56e-5).epsilon(1e-6));
    CHECK(a.dlrmResult.inputLoadS == 0);
    CHECK(test::opSeconds(b, "input loading (synchronous, GPU idle)") ==
          Approx(2.56e-5).epsilon(1e-9));
    double end = 0; // the timeline still ends at the step time
    for (const auto& e : b.timeline)
        end = std::max(end, e.endS);
    CHECK(end == Approx(b.stepTimeS).epsilon(1e-9));
    CHECK_THAT(formatReport(sync, b), Contains("input loading (sync)"));
    // Faster storage or a faster link is never slower.
    CHECK(evaluate(toy({{"system.host_link_gbps", 16}, {"workload.input_read_gbps", 2}}))
              .stepTimeS < b.stepTimeS);
    CHECK(evaluate(toy({{"system.host_link_gbps", 8}, {"workload.input_read_gbps", 4}}))
              .stepTimeS < b.stepTimeS);
    // The round trip keeps it.
    CHECK(parseScenario(toJson(sync), "round-trip").workload.inputReadBytesPerS == 2e9);
}

TEST_CASE("DLRM scenarios round-trip through JSON") {
    Scenario s = toy({{"strategy.emb_sharding", json::array({"rw", "dp"})},
                      {"strategy.sparse_pipeline", true},
                      {"strategy.emb_kernels", "per_table"},
                      {"system.gpu.calibration.host_op_us", 30}});
    const Scenario back = parseScenario(toJson(s), "round-trip");
    CHECK(back.strategy.dlrm.sharding[0] == EmbSharding::RowWise);
    CHECK(back.strategy.dlrm.sharding[1] == EmbSharding::DataParallel);
    CHECK(back.strategy.dlrm.pipelineSparse);
    CHECK(back.strategy.dlrm.perTableKernels);
    CHECK(evaluate(back).stepTimeS == evaluate(s).stepTimeS);
}

TEST_CASE("DLRM: the timeline is the schedule the step time comes from") {
    // Pipelined or not, the compute lane's last op ends at the step time: the waits for the
    // sparse traffic and for the dense all-reduce on the shared network are drawn where the
    // model charges them, and the all-reduce's box ends when the step's accounting says.
    for (const char* pipelined : {"true", "false"}) {
        INFO("sparse_pipeline " << pipelined);
        EvaluateOptions tl;
        tl.timeline = true;
        const Result r = evaluate(
            test::preset("dlrm-dcnv2-64-h100", {std::string("strategy.sparse_pipeline=") + pipelined}),
            tl);
        double end = 0;
        for (const auto& e : r.timeline)
            if (e.lane == Lane::Compute) end = std::max(end, e.endS);
        CHECK(end == Approx(r.stepTimeS).epsilon(1e-9));
        // A wait is the compute stream idle for communication, not compute (the chart drew it
        // as a forward box); the lookups and their update are the embedding's own kind.
        int waits = 0, embedding = 0;
        for (const auto& e : r.timeline) {
            if (e.label.rfind("wait for", 0) == 0 || e.label == "embedding gradient sync") {
                CHECK(e.kind == TimelineKind::Wait);
                ++waits;
            }
            if (e.label.rfind("embedding lookups", 0) == 0 ||
                e.label == "embedding backward + update") {
                CHECK(e.kind == TimelineKind::Embedding);
                ++embedding;
            }
        }
        CHECK(waits >= 1);
        CHECK(embedding == 2);
        const nlohmann::json j = toJson(r);
        bool jsonWait = false;
        for (const auto& e : j.at("timeline"))
            jsonWait = jsonWait || e.at("kind") == "wait";
        CHECK(jsonWait);
    }
}

// Mutation survivors of seed 7 (issue #32): the row-wise backward's pooled-gradient read, the
// table-row-wise shard's, Adam's per-row table state and the transformer interaction's
// parameters, each by hand.

TEST_CASE("DLRM hand-derived: row-wise backward reads its share of the pooled gradients") {
    const DlrmResult x = evaluate(toy({{"strategy.emb_sharding", "rw"}})).dlrmResult;
    // Per table and GPU, half of: the fused SGD backward's 576 B per lookup (row read and
    // written, the radix sort's share) over the group's lookups, and the pooled gradients read,
    // 1024 samples × 64 × 4 B = 262,144 B. A: (2048·576 + 262,144)/2 = 720,896 B; B:
    // (1024·576 + 262,144)/2 = 425,984 B; 1,146,880 B → 1.14688e-6 s at 1 TB/s.
    CHECK(x.embBackwardS == Approx(1.14688e-6).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: a table-row-wise shard's backward is its node rank's share") {
    // One node of two ranks: each table's rows split over both, so each rank does what the
    // row-wise case above does, 1,146,880 B → 1.14688e-6 s.
    const DlrmResult x = evaluate(toy({{"strategy.emb_sharding", "twrw"}})).dlrmResult;
    CHECK(x.embBackwardS == Approx(1.14688e-6).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: Adam on the tables keeps two fp32 moments per element") {
    // Table-wise, the critical GPU holds table A: 1000 rows × (64 × 4 B of weights + 2 × 64 ×
    // 4 B of Adam's moments) = 768,000 B. Column-wise splits each table into two 32-wide
    // shards, one of each on either GPU, and the moments follow the shard's width:
    // (1000 + 100) rows × 32 × (4 + 8) B = 422,400 B.
    const DlrmResult tw = evaluate(toy({{"workload.emb_optimizer", "adam"}})).dlrmResult;
    CHECK(tw.tableBytesCritical == Approx(768000.0));
    const DlrmResult cw = evaluate(toy({{"workload.emb_optimizer", "adam"},
                                        {"strategy.emb_sharding", "cw"}})).dlrmResult;
    CHECK(cw.tableBytesCritical == Approx(422400.0));
}

TEST_CASE("DLRM hand-derived: a transformer interaction layer's parameters") {
    // Over d = 64 wide feature tokens: QKV 3d² + 3d, output d² + d, the 4× MLP 8d² + 5d, two
    // norms 4d: 12d² + 13d = 49,984 per layer (DLRM-transformer, docs/developer/workloads.md).
    auto params = [](int layers) {
        return toy({{"model.dlrm.interaction", "transformer"},
                    {"model.dlrm.transformer_layers", layers},
                    {"model.dlrm.transformer_heads", 1}})
            .model.dlrm.denseParams();
    };
    CHECK(params(2) - params(1) == 49984.0);
}

// Mutation survivors of seed 8 (issue #32): row-wise tables' memory with Adam, the transformer
// interaction's attention backward and kernel count, and the dot interaction's FP8 efficiency
// key, each by hand.

TEST_CASE("DLRM hand-derived: row-wise tables split weights and Adam's moments over the group") {
    // Row-wise over 2 GPUs, Adam on the tables: each GPU holds half of every table's rows, a row
    // 64 × 4 B of weights and 2 × 64 × 4 B of moments. Moments: (1000 + 100) × 512 / 2 =
    // 281,600 B; weights: the dense 1,156 parameters in bf16 (2,312 B) plus (1000 + 100) × 256
    // / 2 = 140,800 B of table rows, 143,112 B. The dense optimizer is SGD: no state.
    const Result r = evaluate(toy({{"strategy.emb_sharding", "rw"},
                                   {"workload.emb_optimizer", "adam"}}));
    CHECK(r.memory.optimizerBytes == Approx(281600.0));
    CHECK(r.memory.weightsBytes == Approx(143112.0));
}

TEST_CASE("DLRM hand-derived: a transformer interaction's attention, forward and backward") {
    // One layer, one head of width h = 64 over F = 3 feature tokens, 512 samples a GPU: the
    // forward's 4·b·F²·h = 1,179,648 FLOPs and the backward's 2.5 times as many, 14·b·F²·h =
    // 4,128,768 in all, at 100 TFLOP/s × the attention efficiency (the toy GPU has no
    // exponential rate). Halving the efficiency from 0.5 to 0.25 adds exactly that work's time
    // once more, 4,128,768 / 1e14 × (4 − 2) = 8.257536e-8 s; the GEMMs and the element-wise
    // passes do not move.
    auto interaction = [](double eff) {
        return evaluate(toy({{"model.dlrm.interaction", "transformer"},
                             {"model.dlrm.transformer_layers", 1},
                             {"model.dlrm.transformer_heads", 1},
                             {"system.gpu.calibration.attention_efficiency", eff}}))
            .dlrmResult.interactionS;
    };
    CHECK(interaction(0.25) - interaction(0.5) == Approx(8.257536e-8).epsilon(1e-9));
    // With an exponential unit of 1e12 a second, each pass also pays its b·F² = 4,608 softmax
    // exponentials: 2 × (4,128,768 / 1e14 + 2 · 4,608 / 1e12) = 1.0100736e-7 s.
    auto withExp = [](double eff) {
        return evaluate(toy({{"model.dlrm.interaction", "transformer"},
                             {"model.dlrm.transformer_layers", 1},
                             {"model.dlrm.transformer_heads", 1},
                             {"system.gpu.peak_exp_tera_per_s", 1},
                             {"system.gpu.calibration.attention_efficiency", eff}}))
            .dlrmResult.interactionS;
    };
    CHECK(withExp(0.25) - withExp(0.5) == Approx(1.0100736e-7).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: a transformer interaction layer's eager kernels") {
    // One GPU, fused tables, 100 µs a launch (the host-bound case above, 46 kernels with the
    // dot interaction's 5 forward and 5 backward): a transformer layer issues 12 forward
    // kernels (QKV, attention, output, two norms, MLP up, activation, down and the adds), 24
    // backward and, for its six trained modules (QKV, output, MLP up and down, two norms), 4
    // optimizer kernels each: 60 in all. One layer: 46 − 10 + 60 = 96 kernels, 9.6 ms; each further layer 60 more.
    auto step = [](int layers) {
        return evaluate(toy({{"gpus", 1}, {"strategy.dp", 1},
                             {"system.gpu.calibration.host_op_us", 100},
                             {"model.dlrm.interaction", "transformer"},
                             {"model.dlrm.transformer_layers", layers},
                             {"model.dlrm.transformer_heads", 1}}))
            .stepTimeS;
    };
    CHECK(step(1) == Approx(96 * 100e-6).epsilon(1e-9));
    CHECK(step(2) == Approx(156 * 100e-6).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: an FP8 dot interaction keys the GEMM curve by equal ideal time") {
    // FP8 at 200 TFLOP/s on a GPU whose 16-bit peak is 100: an FP8 GEMM reaches the efficiency
    // of the 16-bit GEMM with half its FLOPs (docs/developer/model.md §2, "equal ideal time").
    // The dot's batched GEMM is 2·F²·h = 1,152 FLOPs a sample, keyed at 576, where the curve
    // gives 0.1%: 2·512·9·64 = 589,824 FLOPs / (2e14 × 0.001) = 2.94912e-6 s, above its
    // memory time (512 × (192 + 18 + 67) B at 1 TB/s, 1.4e-7 s). The backward is twice the
    // forward: 8.84736e-6 s. The two fp32 tables' pooled rows are cast to FP8 before it and
    // their gradients back, 2 × 512 × 64 × (4 + 1) B = 327,680 B each way at 1 TB/s:
    // 8.84736e-6 + 6.5536e-7 = 9.50272e-6 s.
    const Result r = evaluate(toy({{"system.gpu.peak_tflops.fp8", 200},
                                   {"workload.precision", "fp8"},
                                   {"system.gpu.calibration.gemm_efficiency",
                                    json::array({json::array({576, 0.001}),
                                                 json::array({2304, 1.0})})}}));
    CHECK(r.dlrmResult.interactionS == Approx(9.50272e-6).epsilon(1e-9));
}

// Mutation survivors of seed 10 (issue #32): DCNv2's FLOPs and a frozen DCN's backward.

TEST_CASE("DLRM hand-derived: DCNv2 cross layers' FLOPs, full and low rank") {
    // The cross layers see the concatenation, D = 64 + 2 × 64 = 192 wide, which is also the
    // interaction's output (top MLP 2 × 192 × 1 = 384). Bottom 2,048. Two full-rank layers:
    // 2 × 2 · 192² = 147,456, in all 149,888. Two low-rank layers of r = 16: 2 × 4 · 192 · 16 =
    // 24,576, in all 27,008.
    const DlrmShape& full =
        toy({{"model.dlrm.interaction", "dcnv2"}, {"model.dlrm.dcn_layers", 2}}).model.dlrm;
    CHECK(full.interactionOutput() == 192.0);
    CHECK(full.denseForwardFlopsPerSample() == 149888.0);
    const DlrmShape& low = toy({{"model.dlrm.interaction", "dcnv2"},
                                {"model.dlrm.dcn_layers", 2},
                                {"model.dlrm.dcn_low_rank", 16}})
                               .model.dlrm;
    CHECK(low.denseForwardFlopsPerSample() == 27008.0);
}

TEST_CASE("DLRM hand-derived: a frozen DCN still passes gradients to the tables, once") {
    // With the top MLP frozen, the cross layer's weights (frozen with it) compute no weight
    // gradient, but the tables train, so the input gradient runs: one GEMM pass of the two
    // backward ones. One full-rank layer on 512 samples a GPU: 2 · 512 · 192 · 192 =
    // 37,748,736 FLOPs at 100 TFLOP/s × 0.5 = 7.5497472e-7 s (its 466,944 B move in 4.7e-7 s),
    // the interaction's time saved by freezing.
    auto interaction = [](bool frozenTop) {
        return evaluate(toy({{"model.dlrm.interaction", "dcnv2"},
                             {"model.dlrm.dcn_layers", 1},
                             {"workload.frozen", json{{"top_mlp", frozenTop}}}}))
            .dlrmResult.interactionS;
    };
    CHECK(interaction(false) - interaction(true) == Approx(7.5497472e-7).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: the dense optimizer's update pass, SGD and Adam") {
    // One memory pass over the 1,156 dense parameters (docs/developer/workloads.md "DLRM"):
    // Adam in mixed precision reads and writes its two fp32 moments and the fp32 master copy
    // (24 B), reads the gradient as reduced and writes the bf16 weight: 24 + 2 + 2 = 28 B a
    // parameter, 32,368 B / 1 TB/s = 3.2368e-8 s. With fp32 gradients, 24 + 4 + 2 = 30 B:
    // 3.468e-8 s. SGD in fp32 reads and writes the weight and reads the gradient: 8 + 4 = 12 B,
    // 1.3872e-8 s.
    CHECK(evaluate(toy({{"workload.optimizer", "adam"}})).compute.optimizerS ==
          Approx(3.2368e-8).epsilon(1e-9));
    CHECK(evaluate(toy({{"workload.optimizer", "adam"},
                        {"workload.grad_reduce_precision", "fp32"}}))
              .compute.optimizerS == Approx(3.468e-8).epsilon(1e-9));
    CHECK(evaluate(toy({{"system.gpu.peak_tflops.fp32", 100},
                        {"workload.precision", "fp32"},
                        {"workload.grad_reduce_precision", "fp32"}}))
              .compute.optimizerS == Approx(1.3872e-8).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: a transformer interaction layer's forward FLOPs per sample") {
    // Over F = 3 feature tokens (2 tables + the bottom MLP's output) of d = 64: the layer's
    // GEMMs, 2 · F · 12d² = 294,912 (QKV, output and the 4× MLP), and attention's scores and
    // weighted sum, 2 · 2 · F² · d = 2,304: 297,216 FLOPs a sample per layer
    // (docs/developer/workloads.md "DLRM", DLRM-transformer).
    auto flops = [](int layers) {
        return toy({{"model.dlrm.interaction", "transformer"},
                    {"model.dlrm.transformer_layers", layers},
                    {"model.dlrm.transformer_heads", 1}})
            .model.dlrm.denseForwardFlopsPerSample();
    };
    CHECK(flops(2) - flops(1) == 297216.0);
}

TEST_CASE("DLRM hand-derived: a transformer interaction layer's GEMMs run over b·F token rows") {
    // 512 samples a GPU of F = 3 feature tokens: 1,536 rows of d = 64. Each GEMM on the toy GPU
    // is max(2MNK / 5e13, (KN + MK + MN) · 2 B / 1e12), memory-bound at this width:
    //   QKV 1,536 × 192 × 64: 811,008 B → 8.11008e-7 s;  output 1,536 × 64 × 64: 401,408 B →
    //   4.01408e-7 s;  MLP up 1,536 × 256 × 64 and down 1,536 × 64 × 256: 1,015,808 B each →
    //   1.015808e-6 s;  g = 3.244032e-6 s a pass.
    // A layer runs them forward and twice backward (input and weight gradients: the layer
    // trains and the tables below it do), g·3 = 9.732096e-6 s; its attention 4·b·F²·h FLOPs
    // forward and 2.5× that backward at 5e13, 2.359296e-8 + 5.89824e-8 s; and its element-wise
    // passes, 12 · 1,536 · 64 · 2 B = 2,359,296 B once forward and twice backward,
    // 7.077888e-6 s. A layer more: 1.6892559e-5 s (docs/developer/workloads.md "DLRM").
    auto interaction = [](int layers) {
        return evaluate(toy({{"model.dlrm.interaction", "transformer"},
                             {"model.dlrm.transformer_layers", layers},
                             {"model.dlrm.transformer_heads", 1}}))
            .dlrmResult.interactionS;
    };
    CHECK(interaction(2) - interaction(1) == Approx(1.689255936e-5).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: eager per-table modules copy their row-wise share") {
    // Row-wise over 2 GPUs with one nn.Embedding per table: each GPU serves half of every
    // table's 1024 · 2 + 1024 · 1 = 3,072 lookups and copies each one's gradient twice (the
    // contiguous slice and SGD's scaled values, a read and a write of 64 × 4 B each, 1,024 B a
    // lookup): 1,536 · 1,024 = 1,572,864 B → 1.572864e-6 s; with the torch.cat of the
    // interaction's input (7.20896e-7 s, as table-wise), 2.29376e-6 s of copies.
    // Table-row-wise within the toy's one node splits the rows the same way.
    for (const char* plan : {"rw", "twrw"}) {
        INFO(plan);
        const DlrmResult x =
            evaluate(toy({{"strategy.emb_sharding", plan}, {"strategy.emb_kernels", "per_table"}}))
                .dlrmResult;
        CHECK(x.eagerCopiesS == Approx(2.29376e-6).epsilon(1e-9));
    }
}

TEST_CASE("DLRM hand-derived: the fullest GPU's tables, row-wise and table-row-wise") {
    // SGD keeps no state: a GPU holds only its rows. Row-wise over the 2 GPUs, and table-row-
    // wise (each table to a node, rows split over the node's GPUs: one node here), each GPU
    // holds half of both tables' rows: (1000 + 100) · 64 · 4 B / 2 = 140,800 B.
    for (const char* plan : {"rw", "twrw"}) {
        INFO(plan);
        const DlrmResult x = evaluate(toy({{"strategy.emb_sharding", plan}})).dlrmResult;
        CHECK(x.tableBytesCritical == Approx(140800.0));
        CHECK(x.tableBytesMean == Approx(140800.0)); // every GPU alike
    }
}

TEST_CASE("DLRM hand-derived: each DCNv2 cross layer or transformer layer keeps its activations") {
    // A cross layer keeps x_l and the product x0 ⊙ (W x_l + b) for its backward, two rows of
    // D = 192 a sample: a second layer adds 512 samples × 2 × 192 × 2 B = 393,216 B.
    auto activations = [](int layers) {
        return evaluate(toy({{"model.dlrm.interaction", "dcnv2"},
                             {"model.dlrm.dcn_layers", layers}}))
            .memory.activationsBytes;
    };
    CHECK(activations(2) - activations(1) == Approx(393216.0));
    // A transformer interaction layer keeps 16 rows of its F · d = 192 outputs' width a sample
    // (the memory model's count for this layer, dlrm_placement.cpp: with the 4×-wide MLP's
    // input and output among them): a second layer adds 512 × 16 × 192 × 2 B = 3,145,728 B.
    auto transformer = [](int layers) {
        return evaluate(toy({{"model.dlrm.interaction", "transformer"},
                             {"model.dlrm.transformer_layers", layers},
                             {"model.dlrm.transformer_heads", 1}}))
            .memory.activationsBytes;
    };
    CHECK(transformer(2) - transformer(1) == Approx(3145728.0));
}

TEST_CASE("DLRM hand-derived: a deeper bottom or top MLP issues each layer's kernels") {
    // The host-bound toy above (46 kernels, 100 µs each) with a bottom MLP of two layers
    // (16 → 32 → 64): 3 more forward kernels, 6 more backward and 4 more for the update:
    // 59 kernels, 5.9 ms.
    CHECK(evaluate(toy({{"gpus", 1},
                        {"strategy.dp", 1},
                        {"system.gpu.calibration.host_op_us", 100},
                        {"model.dlrm.bottom_mlp", json::array({32, 64})}}))
              .stepTimeS == Approx(59 * 100e-6).epsilon(1e-9));
    // Likewise a top MLP of two layers (67 → 32 → 1): 46 + 3 + 6 + 4 = 59.
    CHECK(evaluate(toy({{"gpus", 1},
                        {"strategy.dp", 1},
                        {"system.gpu.calibration.host_op_us", 100},
                        {"model.dlrm.top_mlp", json::array({32, 1})}}))
              .stepTimeS == Approx(59 * 100e-6).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: the dense forward is the bottom and top MLPs'") {
    // 512 samples a GPU, bf16, each GEMM memory-bound on the toy GPU:
    //   bottom 16 → 64: (16·64 + 512·16 + 512·64) · 2 B = 83,968 B, bias + ReLU 2 · 512 · 64 ·
    //   2 B = 131,072 B: 2.1504e-7 s;
    //   top 67 → 1 (the dot interaction's 64 + 3·2/2 outputs): (67 + 512·67 + 512) · 2 B =
    //   69,766 B, bias + activation 2,048 B, sigmoid + BCE 4 · 512 · 2 B = 4,096 B: 7.591e-8 s.
    // In all 2.9095e-7 s (the interaction is reported apart).
    CHECK(evaluate(toy()).dlrmResult.denseForwardS == Approx(2.9095e-7).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: the dot interaction's pass, forward and backward") {
    // 512 samples of F = 3 features of h = 64 (bf16): the batched (F×h)·(h×F) is 2·512·9·64 =
    // 589,824 FLOPs (1.18e-8 s), while it reads the features, writes the F² scores, gathers
    // them and writes the 67-wide output, 512 · (192 + 2·9 + 67) · 2 B = 283,648 B → 2.83648e-7 s,
    // the larger. Its backward, input gradients only, costs twice that: 8.50944e-7 s. The fp32
    // pooled embeddings are cast to bf16 before it and their gradients back after (2 tables ·
    // 512 · 64 · (4 + 2) B = 393,216 B each way, 7.86432e-7 s): 1.637376e-6 s in all.
    CHECK(evaluate(toy()).dlrmResult.interactionS == Approx(1.637376e-6).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: a DCNv2 cross layer's parameters, full and low rank") {
    // Over D = 192: W (D²) and b (D), 37,056 a layer; low rank r = 16, U and V (2·D·r) and b,
    // 6,336 (Wang et al. 2021, DCN-V2 eq. 1 and its low-rank form).
    auto params = [](int layers, int rank) {
        return toy({{"model.dlrm.interaction", "dcnv2"},
                    {"model.dlrm.dcn_layers", layers},
                    {"model.dlrm.dcn_low_rank", rank}})
            .model.dlrm.denseParams();
    };
    CHECK(params(2, 0) - params(1, 0) == 37056.0);
    CHECK(params(2, 16) - params(1, 16) == 6336.0);
}

TEST_CASE("DLRM hand-derived: a DCNv2 cross layer's eager kernels") {
    // The host-bound toy (46 kernels, 100 µs each, the dot interaction 5 forward and 5
    // backward) with one full-rank cross layer instead: GEMM, x0 ⊙ ·, + bias, + x_l forward
    // (4), twice that backward (8) and the layer's 4 update kernels: 46 − 10 + 16 = 52. Low
    // rank adds a GEMM (5 forward, 10 backward) and a second weight (8 update kernels): 59.
    auto step = [](int rank) {
        return evaluate(toy({{"gpus", 1},
                             {"strategy.dp", 1},
                             {"system.gpu.calibration.host_op_us", 100},
                             {"model.dlrm.interaction", "dcnv2"},
                             {"model.dlrm.dcn_layers", 1},
                             {"model.dlrm.dcn_low_rank", rank}}))
            .stepTimeS;
    };
    CHECK(step(0) == Approx(52 * 100e-6).epsilon(1e-9));
    CHECK(step(16) == Approx(59 * 100e-6).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: model FLOPs count each dense part's backward passes") {
    // Forward per sample (above): bottom 2,048, dot interaction 1,152, top 134. Backward
    // (model-FLOP convention): a trained MLP counts its weight and input gradients (2 passes),
    // the dot interaction, which has no weights, its input gradient (1) while anything below
    // it trains. All training: 2,048·3 + 1,152·2 + 134·3 = 8,850 a sample, × 1,024 samples =
    // 9,062,400 per step. Top MLP frozen: its input gradient only, 134·2: 8,716 → 8,925,184.
    // Tables and bottom MLP frozen: nothing below the interaction trains, so the bottom and
    // the interaction run no backward and the top only its weight gradient: 2,048 + 1,152 +
    // 268 = 3,468 → 3,551,232.
    CHECK(evaluate(toy()).modelFlopsPerStep == Approx(9062400.0).epsilon(1e-12));
    CHECK(evaluate(toy({{"workload.frozen", json{{"top_mlp", true}}}})).modelFlopsPerStep ==
          Approx(8925184.0).epsilon(1e-12));
    CHECK(evaluate(toy({{"workload.frozen", json{{"embedding", true}, {"bottom_mlp", true}}}}))
              .modelFlopsPerStep == Approx(3551232.0).epsilon(1e-12));
}

TEST_CASE("DLRM hand-derived: the mean lookup bytes add every sharding's share") {
    // Table A table-wise on one of the 2 GPUs (all 1,024 samples × 2 lookups × 256 B =
    // 524,288 B there, 262,144 B a GPU on average) and table B either data-parallel (each GPU
    // looks up its own 512 samples: 131,072 B) or table-row-wise over the node's 2 GPUs (half
    // of its rows for all 1,024 samples: 131,072 B): 393,216 B a GPU on average either way.
    for (const char* b : {"dp", "twrw"}) {
        INFO(b);
        const DlrmResult x = evaluate(toy({{"strategy.emb_sharding", json{"tw", b}}})).dlrmResult;
        CHECK(x.lookupBytesMean == Approx(393216.0));
    }
}

TEST_CASE("DLRM hand-derived: eager per-table modules copy a data-parallel table's local lookups") {
    // Data-parallel tables with one nn.Embedding each: a GPU looks up its own 512 samples in
    // both tables, 512·2 + 512·1 = 1,536 lookups, and copies each one's gradient twice (1,024 B a
    // lookup, as above): 1,572,864 B → 1.572864e-6 s; with the torch.cat of the interaction's
    // input (7.20896e-7 s), 2.29376e-6 s of copies.
    const DlrmResult x =
        evaluate(toy({{"strategy.emb_sharding", "dp"}, {"strategy.emb_kernels", "per_table"}}))
            .dlrmResult;
    CHECK(x.eagerCopiesS == Approx(2.29376e-6).epsilon(1e-9));
}

TEST_CASE("DLRM: the timeline draws each pooled all-to-all for its own duration") {
    // The toy's pooled embeddings all-to-all and its gradients' return, 1.31072e-6 s each way
    // (table-wise, above), are the comm lane's two boxes when the sparse traffic is not
    // pipelined: each box as long as the time the step charges it.
    EvaluateOptions o;
    o.timeline = true;
    const Result r = evaluate(toy(), o);
    CHECK(test::opSeconds(r, "pooled embeddings all-to-all") == Approx(1.31072e-6).epsilon(1e-9));
    CHECK(test::opSeconds(r, "embedding gradients all-to-all") ==
          Approx(1.31072e-6).epsilon(1e-9));
    // Pipelined, both travel in one box under the next step's dense work: 2.62144e-6 s.
    const Result p = evaluate(toy({{"strategy.sparse_pipeline", true}}), o);
    CHECK(test::opSeconds(p, "sparse all-to-alls (next batch's embeddings, this batch's "
                             "gradients)") == Approx(2.62144e-6).epsilon(1e-9));
    // That box starts with the step, as the dense work it runs under does.
    for (const auto& e : p.timeline)
        if (e.label.rfind("sparse all-to-alls", 0) == 0) CHECK(e.startS == 0.0);
}

TEST_CASE("DLRM hand-derived: the dense all-reduce queues behind pipelined sparse traffic") {
    // One network for both: with the sparse all-to-alls pipelined under the dense work, the
    // dense all-reduce starts when the top MLP's gradients are ready or when the sparse traffic
    // has left the network, whichever is later. On a 0.01 GB/s NVLink the toy's pooled
    // all-to-alls take 13.1 ms each way, far past the microseconds of dense compute, so the
    // all-reduce waits for them and none of it hides.
    const DlrmResult x = evaluate(toy({{"strategy.sparse_pipeline", true},
                                       {"strategy.dp_overlap", true},
                                       {"system.tiers.0.gbps", 0.01}}))
                             .dlrmResult;
    REQUIRE(x.denseAllReduceS > 0);
    CHECK(x.denseAllReduceExposedS == Approx(x.denseAllReduceS).epsilon(1e-9));
    // Not overlapped, the all-reduce waits for both the sparse traffic and the backward,
    // whichever ends later: behind the slow sparse traffic, or (on the toy's 100 GB/s NVLink,
    // where the sparse traffic ends first) after the compute. Either way none of it hides.
    for (double gbps : {0.01, 100.0}) {
        INFO(gbps << " GB/s");
        const DlrmResult serial = evaluate(toy({{"strategy.sparse_pipeline", true},
                                                {"strategy.dp_overlap", false},
                                                {"system.tiers.0.gbps", gbps}}))
                                      .dlrmResult;
        REQUIRE(serial.denseAllReduceS > 0);
        CHECK(serial.denseAllReduceExposedS == Approx(serial.denseAllReduceS).epsilon(1e-9));
    }
}

TEST_CASE("DLRM hand-derived: the model's parameters are its tables and its dense part") {
    // 70,400 table parameters and 1,156 dense (above): 71,556.
    CHECK(toy().model.totalParams() == 71556.0);
}

TEST_CASE("DLRM hand-derived: the dense all-reduce hides under the backward that follows it") {
    // Not pipelined, overlapped with the backward: the dense all-reduce starts when the top
    // MLP's gradients exist and shares the one network with the embedding gradients. On a
    // 0.01 GB/s NVLink it takes 231.2 µs (2,312 B of bf16 gradients, ring over 2), far longer
    // than what follows it. Data-parallel tables send nothing: it hides under the interaction's
    // and bottom MLP's backward and the embedding update. Table-wise, the embedding gradients
    // (13.1 ms) go first; the bottom MLP's backward waits for them, and the all-reduce then
    // hides only under the interaction's backward and the embedding update.
    EvaluateOptions o;
    o.timeline = true;
    for (const char* plan : {"dp", "tw"}) {
        INFO(plan);
        const Result r = evaluate(toy({{"strategy.emb_sharding", plan},
                                       {"strategy.dp_overlap", true},
                                       {"system.tiers.0.gbps", 0.01}}),
                                  o);
        const DlrmResult& x = r.dlrmResult;
        CHECK(x.denseAllReduceS == Approx(2.312e-4).epsilon(1e-9));
        const double hidden = test::opSeconds(r, "interaction (bwd)") +
                              test::opSeconds(r, "embedding backward + update") +
                              (std::string(plan) == "dp" ? test::opSeconds(r, "bottom MLP (bwd)")
                                                         : 0.0);
        CHECK(x.denseAllReduceExposedS == Approx(x.denseAllReduceS - hidden).epsilon(1e-9));
    }
    // Pipelined sparse traffic changes nothing for data-parallel tables, which send none: the
    // all-reduce still starts at the top MLP's gradients and hides under what follows them.
    const Result p = evaluate(toy({{"strategy.emb_sharding", "dp"},
                                   {"strategy.sparse_pipeline", true},
                                   {"strategy.dp_overlap", true},
                                   {"system.tiers.0.gbps", 0.01}}),
                              o);
    const double hidden = test::opSeconds(p, "interaction (bwd)") +
                          test::opSeconds(p, "embedding backward + update") +
                          test::opSeconds(p, "bottom MLP (bwd)");
    CHECK(p.dlrmResult.denseAllReduceExposedS ==
          Approx(p.dlrmResult.denseAllReduceS - hidden).epsilon(1e-9));
}

TEST_CASE("DLRM: the dense all-reduce's box is as long as the all-reduce when it fits its window") {
    // On the toy's 100 GB/s NVLink the 2,312 B all-reduce (2.312e-8 s) fits under the
    // interaction's backward: drawn from the top MLP's gradients for exactly its own time.
    EvaluateOptions o;
    o.timeline = true;
    const Result r =
        evaluate(toy({{"strategy.emb_sharding", "dp"}, {"strategy.dp_overlap", true}}), o);
    CHECK(r.dlrmResult.denseAllReduceS == Approx(2.312e-8).epsilon(1e-9));
    CHECK(test::opSeconds(r, "dense gradient all-reduce (shares the network)") ==
          Approx(2.312e-8).epsilon(1e-9));
    CHECK(r.dlrmResult.denseAllReduceExposedS == 0.0);
}

TEST_CASE("DLRM: the report's dense backward is the two MLPs' backward") {
    // The interaction's backward is reported on its own line (interactionS), the MLPs' here.
    EvaluateOptions o;
    o.timeline = true;
    const Result r = evaluate(toy(), o);
    CHECK(r.dlrmResult.denseBackwardS ==
          Approx(test::opSeconds(r, "top MLP (bwd)") + test::opSeconds(r, "bottom MLP (bwd)"))
              .epsilon(1e-12));
}

TEST_CASE("DLRM hand-derived: the communication table by collective") {
    // Table-wise: the pooled all-to-all each way, 1.31072e-6 s (above), 2.62144e-6 s in the
    // EP all-to-all's row; with the tables frozen only the forward's. Data-parallel tables: the
    // dense all-reduce (2.312e-8 s) and the tables' gradient all-reduce (2.816e-6 s, above)
    // share the DP all-reduce's row: 2.83912e-6 s.
    CHECK(evaluate(toy()).commTime(ParallelDim::EP, Collective::AllToAll).serializedS ==
          Approx(2.62144e-6).epsilon(1e-9));
    CHECK(evaluate(toy({{"workload.frozen", json{{"embedding", true}}}}))
              .commTime(ParallelDim::EP, Collective::AllToAll)
              .serializedS == Approx(1.31072e-6).epsilon(1e-9));
    CHECK(evaluate(toy({{"strategy.emb_sharding", "dp"}}))
              .commTime(ParallelDim::DP, Collective::AllReduce)
              .serializedS == Approx(2.83912e-6).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: without overlap the dense all-reduce follows the whole step") {
    // Not overlapped, it starts when the step's compute and its sparse waits are done: all of
    // it is exposed, even while table-wise embedding gradients (13.1 ms on a 0.01 GB/s NVLink)
    // hold up the step.
    const DlrmResult x = evaluate(toy({{"strategy.dp_overlap", false},
                                       {"system.tiers.0.gbps", 0.01}}))
                             .dlrmResult;
    CHECK(x.denseAllReduceS == Approx(2.312e-4).epsilon(1e-9));
    CHECK(x.denseAllReduceExposedS == Approx(x.denseAllReduceS).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: frozen tables synchronise nothing and send partial sums one way") {
    // Data-parallel tables frozen: no gradient all-reduce (it was 2.816e-6 s, above). Row-wise
    // tables frozen: the forward's reduce-scatter of the partial sums, 2.62144e-6 s, and no
    // backward all-gather.
    const json frozen = json{{"embedding", true}};
    CHECK(evaluate(toy({{"strategy.emb_sharding", "dp"}, {"workload.frozen", frozen}}))
              .dlrmResult.dpTableSyncS == 0.0);
    CHECK(evaluate(toy({{"strategy.emb_sharding", "rw"}, {"workload.frozen", frozen}}))
              .dlrmResult.rowwiseCommS == Approx(2.62144e-6).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: the host-bound recurrence, each of its three terms binding") {
    // hostOp = 2; each segment ends at max(t + g, issued + hostOp + g, issued + n·hostOp + g/n):
    //  0: n 2, g 10:  max(10, 0 + 2 + 10, 0 + 4 + 5) = 12 (the first launch, then all of g); issued 4
    //  1: n 0, g 3:   12 + 3 = 15 (no kernels: straight after)
    //  2: n 4, g 2:   max(17, 4 + 2 + 2, 4 + 8 + 0.5) = 17 (the GPU's backlog); issued 12
    //  3: n 3, g 0.3: max(17.3, 14.3, 12 + 6 + 0.1) = 18.1 (the last launch); issued 18
    //  4: n 8, g 0.5: max(18.6, 20.5, 18 + 16 + 0.0625) = 34.0625, the forward's end; issued 34
    //  5: n 10, g 1:  max(35.0625, 37, 34 + 20 + 0.1) = 54.1; issued 54
    //  6: n 1, g 0.5: max(54.6, 56.5, 56.5) = 56.5; issued 56
    //  7: n 2, g 30:  max(86.5, 56 + 2 + 30, 56 + 4 + 15) = 88 (first launch after an idle GPU);
    //     issued 60
    //  8: n 4, g 4:   max(92, 66, 68 + 1) = 92; issued 68
    //  9: n 0, g 1:   93
    // 10: n 3, g 0.3: max(93.3, 70.3, 74.1) = 93.3.
    const double g[madmax::detail::kDlrmSegments] = {10, 3, 2, 0.3, 0.5, 1, 0.5, 30, 4, 1, 0.3};
    const int n[madmax::detail::kDlrmSegments] = {2, 0, 4, 3, 8, 10, 1, 2, 4, 0, 3};
    double forwardEnd = -1, forwardGpu = -1;
    CHECK(madmax::detail::hostBoundStep(g, n, 2.0, forwardEnd, forwardGpu) ==
          Approx(93.3).epsilon(1e-12));
    CHECK(forwardEnd == Approx(34.0625).epsilon(1e-12));
    CHECK(forwardGpu == Approx(15.8).epsilon(1e-12)); // 10 + 3 + 2 + 0.3 + 0.5
}

TEST_CASE("DLRM hand-derived: the dot interaction's forward and backward") {
    // 512 samples a GPU, F = 3 features (two tables and the bottom output) of h = 64: the
    // batched F×F scores are 2·512·9·64 = 589,824 FLOPs (1.18e-8 s at 50 TFLOP/s), the bytes
    // 512·(F·h + 2F² + 67 outputs)·2 B = 283,648 B (2.83648e-7 s at 1 TB/s): memory-bound. Its
    // two kernels (scores, gather) launch at 5 µs each here: 1.0283648e-5 s. The fp32 tables'
    // pooled rows are cast to bf16 first, 2 tables·512·64·(4 + 2) B = 393,216 B and a launch:
    // 5.393216e-6 s, in the forward and again in the backward. Forward 1.5676864e-5 s; the
    // backward (input gradients only: the interaction has no weights) 2·1.0283648e-5 +
    // 5.393216e-6 = 2.5960512e-5 s.
    EvaluateOptions o;
    o.timeline = true;
    const Result r = evaluate(toy({{"system.gpu.calibration.kernel_launch_us", 5}}), o);
    CHECK(test::opSeconds(r, "interaction") == Approx(1.5676864e-5).epsilon(1e-9));
    CHECK(test::opSeconds(r, "interaction (bwd)") == Approx(2.5960512e-5).epsilon(1e-9));
    // Tables and bottom MLP frozen: nothing below the interaction takes a gradient, so it runs
    // no backward at all, not even the cast's.
    const Result frozen = evaluate(
        toy({{"system.gpu.calibration.kernel_launch_us", 5},
             {"workload.frozen", json{{"embedding", true}, {"bottom_mlp", true}}}}),
        o);
    const auto bwd = test::opDurations(frozen, "interaction (bwd)");
    CHECK(std::all_of(bwd.begin(), bwd.end(), [](double d) { return d == 0.0; }));
    CHECK(test::opSeconds(frozen, "interaction") == Approx(1.5676864e-5).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: a mixture-of-experts top MLP's backward runs its router twice") {
    // Two experts, top 2: the router (a 67 → 2 GEMM) takes a weight and an input gradient in
    // the backward, as each expert's one-layer MLP does (two GEMM passes and its bias/ReLU
    // twice); the loss's gradient is one pass. So the top backward is twice the top forward
    // less one loss pass: 4·512·1·2 B = 4,096 B, 4.096e-9 s at 1 TB/s.
    EvaluateOptions o;
    o.timeline = true;
    const Result r =
        evaluate(toy({{"model.dlrm.top_experts", 2}, {"model.dlrm.top_k", 2}}), o);
    CHECK(test::opSeconds(r, "top MLP (bwd)") ==
          Approx(2 * test::opSeconds(r, "top MLP") - 4.096e-9).epsilon(1e-9));
    // The forward by hand (memory-bound throughout at 1 TB/s): the router, a 512 × 67 → 2 GEMM,
    // 268 + 68,608 + 2,048 B = 7.0924e-8 s; the experts' grouped GEMM over the 512·2 = 1,024
    // routed rows, both experts' 67 weights, 268 + 137,216 + 2,048 B = 1.39532e-7 s; bias/ReLU
    // 2·1,024·2 B and the loss 4·512·2 B, 4.096e-9 s each: 2.18648e-7 s.
    CHECK(test::opSeconds(r, "top MLP") == Approx(2.18648e-7).epsilon(1e-9));
    // A two-wide output: the loss's pass reads and writes twice as much, 8.192e-9 s.
    const Result wide = evaluate(toy({{"model.dlrm.top_experts", 2},
                                      {"model.dlrm.top_k", 2},
                                      {"model.dlrm.top_mlp", json::array({2})}}),
                                 o);
    CHECK(test::opSeconds(wide, "top MLP (bwd)") ==
          Approx(2 * test::opSeconds(wide, "top MLP") - 8.192e-9).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: the embedding backward-update launches a sort and an update") {
    // Fused tables, trained: the sort of the looked-up ids and the fused backward-update, two
    // kernels: at 5 µs a launch the op is 10 µs longer than with free launches.
    EvaluateOptions o;
    o.timeline = true;
    const double free = test::opSeconds(evaluate(toy(), o), "embedding backward + update");
    const double launched = test::opSeconds(
        evaluate(toy({{"system.gpu.calibration.kernel_launch_us", 5}}), o),
        "embedding backward + update");
    CHECK(launched - free == Approx(1e-5).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: host-bound on two GPUs, the step is the host's walk") {
    // The toy's two GPUs (tables table-wise, pooled all-to-alls over NVLink) at 100 µs a
    // launch: the same 46 kernels as on one GPU, issued back to back; the GPU work and the
    // exposed all-to-alls (microseconds) hide behind the host, so the step is the walk, 4.6 ms
    // (plus the last kernel's own time), and the stall is what the walk adds to the schedule.
    const Result r = evaluate(toy({{"system.gpu.calibration.host_op_us", 100}}));
    REQUIRE(r.exposedCommS > 0);
    CHECK(r.stepTimeS == Approx(46 * 100e-6).epsilon(1e-6));
    const Result graphs = evaluate(toy({{"system.gpu.calibration.host_op_us", 100},
                                        {"strategy.cuda_graphs", true}}));
    CHECK(r.compute.hostStallS == Approx(r.stepTimeS - graphs.stepTimeS).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: model FLOPs with a mixture-of-experts top MLP, and their rate") {
    // Forward per sample (above) 3,736: bottom 2,048, the top's two experts 2·134 and router
    // 268 = 536, the dot interaction 1,152. Backward: both MLPs (router included) their weight
    // and input gradients, the interaction its input gradient: 3·2,048 + 3·536 + 2·1,152 =
    // 10,056 a sample, × 1,024 = 10,297,344 per step. Per GPU per second, in TFLOP/s, and
    // against the toy's 100 TFLOP/s peak for MFU.
    const Result r = evaluate(toy({{"model.dlrm.top_experts", 2}, {"model.dlrm.top_k", 2}}));
    CHECK(r.modelFlopsPerStep == Approx(10297344.0).epsilon(1e-12));
    CHECK(r.modelTflopsPerGpu == Approx(10297344.0 / r.stepTimeS / 2 / 1e12).epsilon(1e-12));
    CHECK(r.mfu == Approx(10297344.0 / r.stepTimeS / 2 / 100e12).epsilon(1e-12));
}

TEST_CASE("DLRM hand-derived: table-row-wise sums reduce-scatter forward, all-gather back") {
    // TWRW: each table split over the node's GPUs, the partial sums reduce-scattered in the
    // forward and the gradients all-gathered back, the same bytes each way; frozen tables
    // send nothing back.
    const Result r = evaluate(toy({{"strategy.emb_sharding", "twrw"}}));
    const auto& ep = r.comm[int(ParallelDim::EP)];
    REQUIRE(ep[int(Collective::ReduceScatter)].serializedS > 0);
    CHECK(ep[int(Collective::AllGather)].serializedS ==
          Approx(ep[int(Collective::ReduceScatter)].serializedS).epsilon(1e-12));
    const Result frozen = evaluate(toy({{"strategy.emb_sharding", "twrw"},
                                        {"workload.frozen", json{{"embedding", true}}}}));
    CHECK(frozen.comm[int(ParallelDim::EP)][int(Collective::AllGather)].serializedS == 0.0);
}

TEST_CASE("DLRM hand-derived: frozen per-table modules still concatenate, and copy nothing back") {
    // One module per table, tables frozen: the forward's torch.cat reads the bottom output
    // (512·64·2 B) and each table's fp32 pooled rows (2·512·64·4 B), 327,680 B, and writes the
    // 3·64-wide fp32 input, 512·192·4 = 393,216 B: 720,896 B, 7.20896e-7 s at 1 TB/s. No
    // gradients, so no backward copies.
    const Result r = evaluate(toy({{"strategy.emb_kernels", "per_table"},
                                   {"workload.frozen", json{{"embedding", true}}}}));
    CHECK(r.dlrmResult.eagerCopiesS == Approx(7.20896e-7).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: the table weights are the fullest GPU's rows") {
    // Table-wise on 2 GPUs: one holds A (1,000 × 64 fp32 = 256,000 B), the other B (25,600 B).
    // The memory's weights are the fullest GPU's tables plus the bf16 dense part (1,156 · 2 B).
    const Result r = evaluate(toy());
    CHECK(r.dlrmResult.tableWeightsBytes == Approx(256000.0).epsilon(1e-12));
    CHECK(r.memory.weightsBytes == Approx(256000.0 + 2312.0).epsilon(1e-12));
}

TEST_CASE("DLRM hand-derived: the lookups write every sharding's pooled outputs") {
    // Table A table-wise and B data-parallel on 2 GPUs. The GPU holding A reads A's rows for
    // all 1,024 samples (2 lookups of 256 B: 524,288 B) and B's for its own 512 (131,072 B),
    // and writes A's pooled rows for all 1,024 samples (262,144 B) and B's for its 512
    // (131,072 B): 1,048,576 B, 1.048576e-6 s at 1 TB/s.
    EvaluateOptions o;
    o.timeline = true;
    const Result r = evaluate(toy({{"strategy.emb_sharding", json{"tw", "dp"}}}), o);
    CHECK(test::opSeconds(r, "embedding lookups") == Approx(1.048576e-6).epsilon(1e-9));
}

TEST_CASE("DLRM hand-derived: a frozen top MLP's backward is its input gradient alone") {
    // Top MLP [1] frozen, the layers below training: its one GEMM runs once more for the input
    // gradient (no weight gradient) and its bias/ReLU twice; with the loss's one pass the
    // backward is the forward plus one bias/ReLU pass, 2·512·1·2 B = 2,048 B: 2.048e-9 s.
    EvaluateOptions o;
    o.timeline = true;
    const Result r = evaluate(toy({{"workload.frozen", json{{"top_mlp", true}}}}), o);
    CHECK(test::opSeconds(r, "top MLP (bwd)") ==
          Approx(test::opSeconds(r, "top MLP") + 2.048e-9).epsilon(1e-9));
}

TEST_CASE("DLRM: the sparse communication's figures add every sharding's traffic") {
    // 16 GPUs on two nodes of 8: table A table-wise (its pooled all-to-all) and table B
    // table-row-wise (its partial sums reduce-scattered inside the node, then an all-to-all
    // across the nodes), or A row-wise and B table-row-wise (both reduce-scatter and
    // all-gather). The report's forward and backward all-to-all times and its row-wise time
    // are the communication table's rows, every sharding's share included.
    const std::vector<std::pair<std::string, json>> sixteen = {{"gpus", 16}, {"strategy.dp", 16}};
    auto with = [&](const char* a, const char* b) {
        auto e = sixteen;
        e.push_back({"strategy.emb_sharding", json{a, b}});
        return evaluate(toy(e));
    };
    // (The table's all-to-all row also carries the ids sent to their rows' owners.)
    const Result twTwrw = with("tw", "twrw"), twDp = with("tw", "dp");
    REQUIRE(twDp.dlrmResult.a2aFwdS > 0);
    CHECK(twTwrw.dlrmResult.a2aFwdS > twDp.dlrmResult.a2aFwdS); // B's cross-node share adds
    CHECK(twTwrw.dlrmResult.a2aFwdS == Approx(twTwrw.dlrmResult.a2aBwdS).epsilon(1e-12));
    CHECK(twTwrw.dlrmResult.a2aFwdS + twTwrw.dlrmResult.a2aBwdS <
          twTwrw.comm[int(ParallelDim::EP)][int(Collective::AllToAll)].serializedS);
    const Result rwTwrw = with("rw", "twrw");
    const auto& ep2 = rwTwrw.comm[int(ParallelDim::EP)];
    REQUIRE(rwTwrw.dlrmResult.rowwiseCommS > 0);
    CHECK(rwTwrw.dlrmResult.rowwiseCommS ==
          Approx(ep2[int(Collective::ReduceScatter)].serializedS +
                 ep2[int(Collective::AllGather)].serializedS)
              .epsilon(1e-12));
}

TEST_CASE("DLRM: one GPU with pipelined sparse traffic exposes no communication") {
    // One GPU: no all-to-all, no dense all-reduce; pipelining the (absent) sparse traffic
    // changes nothing.
    const std::vector<std::pair<std::string, json>> one = {{"gpus", 1}, {"strategy.dp", 1}};
    auto e = one;
    e.push_back({"strategy.sparse_pipeline", true});
    const Result p = evaluate(toy(e));
    CHECK(p.exposedCommS == 0.0);
    CHECK(p.stepTimeS == evaluate(toy(one)).stepTimeS);
}

TEST_CASE("DLRM hand-derived: frozen tables keep no optimizer state") {
    // Adam on the tables (SGD on the dense part): trained, its two fp32 moments per element of
    // the fullest GPU's table (A: 1,000 × 64 × 8 B = 512,000 B); frozen, none at all.
    const Result trained = evaluate(toy({{"workload.emb_optimizer", "adam"}}));
    CHECK(trained.memory.optimizerBytes == Approx(512000.0).epsilon(1e-12));
    const Result frozen = evaluate(toy({{"workload.emb_optimizer", "adam"},
                                        {"workload.frozen", json{{"embedding", true}}}}));
    CHECK(frozen.memory.optimizerBytes == 0.0);
}
