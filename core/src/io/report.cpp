#include "madmax/report.hpp"

#include "files/text_columns.hpp"

#include "madmax/flops.hpp"

#include "engine/op_cost.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace madmax {

namespace {

using detail::fmt;
using detail::pad;

/// "Frozen     …" for a fine-tuning scenario (ends in a newline), or nothing.
std::string frozenLine(const Scenario& s) {
    const Frozen& f = s.workload.frozen;
    if (!f.any()) return "";
    if (f.lora()) {
        const char* where = f.loraTargets == LoraTargets::Attention ? "the attention projections"
                            : f.loraTargets == LoraTargets::Mlp
                                ? "the MLP matrices"
                                : "the attention projections and MLP matrices";
        const char* base = f.loraBaseBytes < 1.0   ? "frozen in NF4 (QLoRA)"
                           : f.loraBaseBytes < 2.0 ? "frozen in FP8"
                                                   : "frozen";
        return "LoRA       rank " + std::to_string(f.loraRank) + " adapters on " + where + ", " +
               fmt("%.3g", loraParams(s.model, f) / 1e6) + " M trainable parameters; the base " +
               base + "\n";
    }
    std::string parts;
    auto add = [&](const std::string& p) { parts += (parts.empty() ? "" : ", ") + p; };
    if (f.embedding) add(s.model.isDlrm() ? "embedding tables" : "embedding");
    if (f.layers > 0)
        add(f.layers == s.model.layers ? "every layer"
            : f.layers == 1           ? "layer " + std::to_string(f.firstLayer)
                                      : "layers " + std::to_string(f.firstLayer) + "–" +
                                            std::to_string(f.firstLayer + f.layers - 1));
    if (f.head) add(s.model.vit ? "classifier" : "LM head");
    if (f.bottomMlp) add("bottom MLP");
    if (f.topMlp) add("top MLP");
    return "Frozen     " + parts + " (fine-tuning: no weight gradients, reduction or optimizer "
                               "state for them)\n";
}
std::string pct(double part, double whole) {
    return whole > 0 ? fmt("%5.1f%%", 100.0 * part / whole) : "   - ";
}
} // namespace

std::string formatSeconds(double s) {
    // Beyond ~11 days a fixed point says nothing more and breaks the report's columns.
    if (s >= 1e6) return fmt("%.3g s", s);
    if (s >= 1.0) return fmt("%.3f s", s);
    if (s >= 1e-3) return fmt("%.2f ms", s * 1e3);
    return fmt("%.1f us", s * 1e6);
}

std::string formatBytes(double b) {
    const double a = std::fabs(b);
    if (a >= 1e15) return fmt("%.3g TB", b / 1e12);
    if (a >= 1e12) return fmt("%.2f TB", b / 1e12);
    if (a >= 1e9) return fmt("%.2f GB", b / 1e9);
    if (a >= 1e6) return fmt("%.1f MB", b / 1e6);
    return fmt("%.0f kB", b / 1e3);
}

namespace {
/// The step's framework overhead as the scenario states it, or that none is stated (the engine
/// assumes none): one row of a "Where the step goes" table whose names are `width` wide.
void appendOverhead(std::string& o, double overheadS, double stepS, int width) {
    o += "  " + pad("framework overhead", width);
    o += overheadS > 0 ? pad(formatSeconds(overheadS), 12) + pct(overheadS, stepS) + "\n"
                       : "none stated (workload.step_overhead_ms, micro_batch_overhead_ms)\n";
}

/// The memory section shared by training and serving reports; serving adds the KV cache.
void appendMemory(std::string& o, const MemoryBreakdown& m, const InferenceResult* serving) {
    o += "\nMemory per GPU\n";
    auto mem = [&](const char* name, double v) {
        o += "  " + pad(name, 22) + formatBytes(v) + "\n";
    };
    mem("weights", m.weightsBytes);
    if (serving) {
        mem("KV cache", m.kvCacheBytes);
        o += "    per token " + formatBytes(serving->kvBytesPerToken) + ", per sequence " +
             formatBytes(serving->kvBytesPerSequence) + "\n";
    } else {
        mem("gradients", m.gradsBytes);
        mem("optimizer state", m.optimizerBytes);
    }
    mem("activations", m.activationsBytes);
    mem("reserve", m.reserveBytes);
    o += "  " + pad("total / capacity", 22) + formatBytes(m.totalBytes()) + " / " +
         formatBytes(m.capacityBytes) +
         (m.fits() ? "  fits, " + formatBytes(m.marginBytes()) + " spare"
                   : "  DOES NOT FIT: " + formatBytes(-m.marginBytes()) + " over") +
         "\n";
}

/// Disaggregation, speculation, cost: one line each when they apply.
std::string deploymentLines(const InferenceWorkload& w, const InferenceResult& ir) {
    std::string o;
    if (w.phase != ServingPhase::Aggregated)
        o += "Pool       " + std::string(toString(w.phase)) + " (disaggregated): one prompt's KV "
             "cache " + formatBytes(ir.kvTransferBytes) + " per GPU sent in " +
             formatSeconds(ir.kvTransferS) + " over the scale-out network\n";
    if (w.requests > 0)
        o += "Benchmark  " + std::to_string(w.requests) + " requests, all queued at the start: " +
             std::to_string(ir.waves) + (ir.waves == 1 ? " wave" : " waves") + " of up to " +
             std::to_string(ir.batch) + " a replica, makespan " + formatSeconds(ir.makespanS) +
             " (throughput over it)\n";
    if (w.draftTokens > 0)
        o += "Speculation " + std::to_string(w.draftTokens) + " draft tokens at " +
             fmt("%.0f%% acceptance: ", 100 * w.acceptanceRate) +
             fmt("%.2f tokens per sequence per round\n", ir.tokensPerStep);
    if (ir.dollarsPerMillionTokens > 0)
        o += fmt("Cost       $%.3f per million tokens", ir.dollarsPerMillionTokens) +
             (ir.joulesPerToken > 0 ? fmt(", %.2f J per token", ir.joulesPerToken) : std::string()) +
             "\n";
    return o;
}

/// A prefill pool's throughput (it generates no tokens to pace).
std::string prefillPoolLines(const Result& r) {
    const InferenceResult& ir = r.inference;
    return "Prompt tokens/s      " + fmt("%.0f", ir.inputTokensPerS) +
           fmt(" (%.1f per GPU, prefix-cache hits included), ", r.tokensPerSPerGpu) +
           fmt("%.2f requests/s\n", ir.requestsPerS) + "One pass of " +
           std::to_string(ir.batch) + " prompts: " + formatSeconds(r.stepTimeS) + ", of which " +
           formatSeconds(r.exposedCommS) + " communication or KV sending\n" +
           (ir.poolLoad < 1 ? fmt("Load                 %.1f%% of capacity: ", 100 * ir.poolLoad) +
                                  formatSeconds(ir.prefillQueueS) +
                                  " of TTFT waiting for the pool (M/D/1)\n"
                            : std::string());
}

/// Both sides of the decode rooflines, so a side that did not bind still shows.
std::string rooflineLines(const InferenceResult& ir) {
    return "Rooflines of the round (each side, whichever bound): GEMMs read weights " +
           formatSeconds(ir.decodeWeightSideS) + " vs math " + formatSeconds(ir.decodeGemmSideS) +
           "; attention reads KV " + formatSeconds(ir.decodeKvSideS) + " vs math " +
           formatSeconds(ir.decodeAttentionSideS) + "\n";
}

std::string formatInference(const Scenario& s, const Result& r) {
    const InferenceResult& ir = r.inference;
    const InferenceWorkload& w = s.workload.inference;
    std::string o;
    o += "Scenario   " + (s.name.empty() ? std::string("(unnamed)") : s.name) + "\n";
    o += "Model      " + s.model.name + fmt(" (%.1fB parameters)\n", s.model.totalParams() / 1e9);
    o += "System     " + s.system.name + ", " + std::to_string(s.gpus) + " x " + s.system.gpu.name +
         "\n";
    o += "Serving    TP" + std::to_string(s.strategy.tp) + " PP" + std::to_string(s.strategy.pp) +
         " x " + std::to_string(s.strategy.dp) + " replicas" +
         (s.model.isMoe() ? ", EP" + std::to_string(s.strategy.ep) : std::string()) +
         "; weights " +
         std::string(toString(w.weightPrecision)) + ", activations " +
         std::string(toString(s.workload.precision)) + ", KV cache " +
         std::string(toString(w.kvPrecision)) +
         (s.model.mla ? ", MLA decode " + std::string(toString(w.mlaDecode)) : std::string()) +
         "\n";
    o += "Requests   " + std::to_string(w.inputTokens) + " in / " + std::to_string(w.outputTokens) +
         " out (" + std::string(toString(w.outputDistribution)) + "), " +
         (w.mode == ServingMode::Server ? "server" : "offline") +
         (w.prefixCacheHit > 0 ? fmt(", %.1f%% of prompt tokens from the prefix cache",
                                     100 * w.prefixCacheHit)
                               : std::string()) +
         (w.meanLoad < 1 ? fmt(", mean load %.1f%% of capacity", 100 * w.meanLoad)
                         : std::string()) +
         "\n";
    if (ir.prefixLoadS > 0)
        o += "Prefix     cache offloaded (tier host): one prompt's hits load into each GPU in " +
             formatSeconds(ir.prefixLoadS) +
             fmt(" at %.1f GB/s, layer by layer beside its prefill\n", ir.prefixLoadBytesPerS / 1e9);
    o += deploymentLines(w, ir) + "\n";
    o += "Batch per replica    " + std::to_string(ir.batch) + " (" +
         std::to_string(ir.maxBatchThatFits) + " fit in KV memory)" +
         (ir.meetsObjectives ? "" : "  OBJECTIVES NOT MET even at batch 1") + "\n";
    o += "TTFT                 " + formatSeconds(ir.ttftS) + "\n";
    o += "TPOT                 " + formatSeconds(ir.tpotS) + "\n";
    o += "End-to-end latency   " + formatSeconds(ir.e2eLatencyS) + "\n";
    o += "Output tokens/s      " + fmt("%.0f", ir.outputTokensPerS) +
         fmt(" (%.1f per GPU), ", ir.outputTokensPerSPerGpu) +
         fmt("%.2f requests/s\n\n", ir.requestsPerS);
    if (w.phase == ServingPhase::Prefill) return o + prefillPoolLines(r);
    const double p2p = r.commTime(ParallelDim::PP, Collective::P2P).serializedS;
    const double round = ir.decodeS() + ir.prefillPerIterationS + p2p;
    o += "One decode round (" + formatSeconds(round) + fmt(", %.2f tokens per sequence) spent on\n",
                                                           ir.tokensPerStep);
    auto line = [&](const char* name, double v) {
        o += "  " + pad(name, 22) + pad(formatSeconds(v), 12) + pct(v, round) + "\n";
    };
    line("weight reads", ir.decodeWeightReadS);
    line("KV-cache reads", ir.decodeKvReadS);
    line("compute", ir.decodeComputeS);
    const double a2a = r.commTime(ParallelDim::EP, Collective::AllToAll).serializedS;
    line("TP communication", ir.decodeCommS - a2a);
    if (s.model.isMoe()) line("EP all-to-all", a2a);
    line("kernel overheads", ir.decodeOverheadS);
    line("prefills (new requests)", ir.prefillPerIterationS);
    line("pipeline p2p", p2p);
    if (ir.draftS > 0) o += "  (of which draft passes " + formatSeconds(ir.draftS) + ")\n";
    o += rooflineLines(ir);
    appendMemory(o, r.memory, &ir);
    return o;
}
} // namespace

namespace {

std::string formatDlrm(const Scenario& s, const Result& r) {
    const DlrmShape& d = s.model.dlrm;
    const DlrmPlan& plan = s.strategy.dlrm;
    const DlrmResult& x = r.dlrmResult;
    std::string o;
    o += "Scenario   " + (s.name.empty() ? std::string("(unnamed)") : s.name) + "\n";
    o += "Model      " + s.model.name +
         fmt(" (%.0f tables, ", double(d.tableCount())) +
         fmt("%.2fB embedding parameters; ", d.tableParams() / 1e9) +
         fmt("%.1fM dense parameters, ", d.denseParams() / 1e6) +
         std::string(toString(d.interaction)) + " interaction)\n";
    o += "System     " + s.system.name + ", " + std::to_string(s.gpus) + " x " + s.system.gpu.name +
         "\n";
    std::string types;
    for (std::size_t t = 0; t < d.tables.size(); ++t) {
        if (t > 0 && t >= 6) {
            types += fmt(", … (%.0f groups)", double(d.tables.size()));
            break;
        }
        types += (t ? ", " : "") + d.tables[t].name + " " + std::string(toString(plan.sharding[t]));
    }
    o += "Embeddings " + types + "\n";
    o += "           " +
         (x.replicas > 1 ? fmt("2-D: groups of %.0f GPUs, ", double(x.groupSize)) +
                               fmt("%.0f replicas", double(x.replicas))
                         : fmt("one group of %.0f GPUs", double(x.groupSize))) +
         (plan.pipelineSparse ? ", sparse pipelined over the dense step" : "") + "\n";
    o += "Workload   global batch " + std::to_string(s.workload.globalBatch) + " samples, " +
         std::string(toString(s.workload.precision)) + " dense, embedding optimizer " +
         std::string(toString(s.workload.embOptimizer)) + "\n";
    o += frozenLine(s) + "\n";
    o += "Step time            " + formatSeconds(r.stepTimeS) + "\n";
    o += "Throughput           " + fmt("%.0f samples/s", r.samplesPerS) +
         fmt(" (%.0f per GPU)\n", r.samplesPerS / s.gpus);
    o += "Model TFLOP/s/GPU    " + fmt("%.1f", r.modelTflopsPerGpu) +
         fmt("   MFU %.1f%% (dense part only)\n\n", r.mfu * 100);
    o += "Where the step goes (most loaded GPU)\n";
    auto line = [&](const char* name, double v) {
        o += "  " + pad(name, 26) + pad(formatSeconds(v), 12) + pct(v, r.stepTimeS) + "\n";
    };
    line("embedding lookups", x.lookupFwdS);
    line("embedding backward+update", x.embBackwardS);
    line("bottom + top MLPs", x.denseForwardS + x.denseBackwardS);
    line("interaction", x.interactionS);
    if (x.eagerCopiesS > 0)
        o += "  " + pad("  incl. per-table copies", 26) + pad(formatSeconds(x.eagerCopiesS), 12) +
             "(eager modules: torch.cat in the interaction, gradient passes in the backward)\n";
    line("dense optimizer", r.compute.optimizerS);
    line("exposed communication", r.exposedCommS);
    if (r.compute.hostStallS > 0) line("host launch stalls", r.compute.hostStallS);
    appendOverhead(o, r.overheadS - x.inputLoadS, r.stepTimeS, 26); // the input read: below
    if (x.inputLoadS > 0) line("input loading (sync)", x.inputLoadS);
    o += "\nEmbedding communication (per step)\n";
    auto cl = [&](const char* name, double v) {
        if (v > 0) o += "  " + pad(name, 37) + formatSeconds(v) + "\n";
    };
    cl("pooled all-to-all (fwd + bwd)", x.a2aFwdS + x.a2aBwdS);
    cl("row-wise reduce-scatter/all-gather", x.rowwiseCommS);
    cl("ids all-to-all", x.idsA2aS);
    cl("2-D replica gradient sync", x.replicaSyncS);
    cl("DP tables' gradient all-reduce", x.dpTableSyncS);
    cl("dense gradient all-reduce", x.denseAllReduceS);
    o += "  " + pad("exposed sparse communication", 37) + formatSeconds(x.sparseExposedS) + "\n";
    o += "\nLoad balance\n";
    o += "  " + pad("lookup bytes per GPU", 26) + formatBytes(x.lookupBytesCritical) +
         " on the most loaded, " + formatBytes(x.lookupBytesMean) + " mean\n";
    o += "  " + pad("tables per GPU", 26) + formatBytes(x.tableBytesCritical) +
         " on the fullest, " + formatBytes(x.tableBytesMean) + " mean\n";
    o += "  " + pad("imbalance", 26) + fmt("%.2f", x.imbalance) +
         " (lookup bytes, most loaded ÷ mean)\n";
    appendMemory(o, r.memory, nullptr);
    return o;
}

} // namespace

namespace {

/// The training run's header: scenario, model, system, strategy, experts, workload.
void appendTrainingHeader(std::string& o, const Scenario& s, const Result& r) {
    const Strategy& st = s.strategy;
    o += "Scenario   " + (s.name.empty() ? std::string("(unnamed)") : s.name) + "\n";
    o += "Model      " + s.model.name + fmt(" (%.1fB parameters)\n", s.model.totalParams() / 1e9);
    o += "System     " + s.system.name + ", " + std::to_string(s.gpus) + " x " + s.system.gpu.name +
         "\n";
    o += "Strategy   TP" + std::to_string(st.tp) + " PP" + std::to_string(st.pp) +
         (st.vp > 1 ? " (v=" + std::to_string(st.vp) + ")" : "") + " CP" + std::to_string(st.cp) +
         " DP" + std::to_string(st.dp) + ", micro-batch " + std::to_string(st.microBatch) + " x " +
         std::to_string(r.microBatches) + ", ZeRO-" + std::to_string(st.zeroStage) +
         (st.fsdpStyle == FsdpStyle::DeepSpeedLegacy ? " (DeepSpeed ≤ 0.5 coordinator)" : "") +
         ", recompute " + recomputeLabel(st) +
         (st.offloadLayers > 0
              ? ", activations of " + std::to_string(st.offloadLayers) + " layers offloaded"
              : "") +
         (st.sequenceParallel ? ", SP" : "") + (st.tpCommOverlap ? ", TP overlap" : "") + "\n";
    if (s.model.isMoe())
        o += "Experts    EP" + std::to_string(st.ep) + " ETP" + std::to_string(st.etp) + " EDP" +
             std::to_string(st.expertDataParallel()) + ", " +
             (st.dispatcher == MoeDispatcher::DeepEp ? "per-node (DeepEP) dispatch"
                                                     : "flat all-to-all dispatch") +
             (st.moeFp8Dispatch ? " in FP8" : "") + (st.moeFusedMlp ? ", fused grouped MLP" : "") +
             (st.moeA2aOverlap ? ", all-to-all overlapped" : ", all-to-all exposed") + "\n";
    o += "Workload   global batch " + std::to_string(s.workload.globalBatch) + " x " +
         std::to_string(s.workload.seqLen) + " tokens, " +
         std::string(toString(s.workload.precision)) + "\n";
    o += frozenLine(s) + "\n";
}

/// Why attention is slow where it is: its softmax's exponentials outlast the tensor cores
/// (one per score; the forward's 2·(d_qk + d_v) FLOPs, the backward's 2.5×), and the two add
/// (op_cost.hpp, attentionComputeS).
void appendSoftmaxBound(std::string& o, const Scenario& s) {
    if (s.workload.attention != AttentionKernel::Flash) return;
    const Gpu& g = s.system.gpu;
    const double ratio = detail::softmaxOverTensor(g, g.peak16(), attentionFlopsPerScore(s.model));
    if (ratio <= 1.0) return;
    o += "  attention waits mostly on its softmax: the exponentials take " + fmt("%.2f", ratio) +
         "x the tensor cores' time forward, " + fmt("%.0f", 100.0 * ratio / (1.0 + ratio)) +
         "% of the kernel" + (ratio > 2.5 ? fmt(", %.2fx backward", ratio / 2.5) : std::string()) +
         " (head dims " + std::to_string(s.model.qkHeadDim()) + "/" +
         std::to_string(s.model.vHeadDim()) + "; co-design knob sfu_exp)\n";
}

/// Each collective that ran, serialized and exposed.
void appendCommunication(std::string& o, const Result& r) {
    o += "\nCommunication          serialized    exposed\n";
    for (int d = 0; d < kParallelDimCount; ++d)
        for (int c = 0; c < kCollectiveCount; ++c) {
            const CommTime& t = r.comm[d][c];
            if (t.serializedS <= 0) continue;
            std::string name =
                std::string(toString(ParallelDim(d))) + " " + std::string(toString(Collective(c)));
            o += "  " + pad(name, 21) + pad(formatSeconds(t.serializedS), 14) +
                 formatSeconds(t.exposedS) + "\n";
        }
}

/// The critical rank's experts: dispatch and combine by tier, weights, imbalance and drops.
void appendMoe(std::string& o, const Scenario& s, const MoeResult& e) {
    o += "\nMixture of experts (critical rank, one layer, one micro-batch)\n";
    o += "  " + pad("experts per GPU", 22) + std::to_string(e.localExperts) + " of " +
         std::to_string(s.model.moe.experts) + ", top-" + std::to_string(s.model.moe.topK) +
         fmt(", %.0f token copies", e.routedCopiesPerGpu) + "\n";
    o += "  " + pad("dispatch", 22) + pad(formatSeconds(e.dispatchS), 12) + "NVLink " +
         formatBytes(e.dispatchScaleUpBytes) + ", network " +
         formatBytes(e.dispatchScaleOutBytes) + "\n";
    o += "  " + pad("combine", 22) + pad(formatSeconds(e.combineS), 12) + "NVLink " +
         formatBytes(e.combineScaleUpBytes) + ", network " + formatBytes(e.combineScaleOutBytes) +
         "\n";
    o += "  " + pad("all-to-all per step", 22) + formatSeconds(e.a2aPerStepS) + ", exposed " +
         formatSeconds(e.a2aExposedPerStepS) + "\n";
    o += "  " + pad("expert weights", 22) + formatBytes(e.expertWeightsBytes) + " per GPU\n";
    o += "  " + pad("load imbalance", 22) + fmt("%.2f", s.model.moe.loadImbalance) +
         (s.model.moe.capacityFactor > 0
              ? fmt(", capacity factor %.2f", s.model.moe.capacityFactor) +
                    fmt(", %.2f%% of copies dropped", 100 * e.tokenDropRate)
              : std::string(", dropless")) +
         "\n";
}

} // namespace

std::string formatReport(const Scenario& s, const Result& r) {
    if (r.isInference) return formatInference(s, r);
    if (r.dlrmResult.active) return formatDlrm(s, r);
    std::string o;
    appendTrainingHeader(o, s, r);
    o += "Step time            " + formatSeconds(r.stepTimeS) + "\n";
    o += "Throughput           " + fmt("%.0f tokens/s", r.tokensPerS) +
         fmt(" (%.1f per GPU), ", r.tokensPerSPerGpu) + fmt("%.2f samples/s\n", r.samplesPerS);
    o += "Model TFLOP/s/GPU    " + fmt("%.1f", r.modelTflopsPerGpu) +
         fmt("   MFU %.1f%%\n", r.mfu * 100);
    o += "Hardware TFLOP/s/GPU " + fmt("%.1f", r.hardwareTflopsPerGpu) +
         fmt("   HFU %.1f%%\n\n", r.hfu * 100);
    o += "Where the step goes (critical stage " + std::to_string(r.criticalStage) + ")\n";
    auto line = [&](const char* name, double v) {
        o += "  " + pad(name, 22) + pad(formatSeconds(v), 12) + pct(v, r.stepTimeS) + "\n";
    };
    line("forward", r.compute.forwardS);
    line("backward", r.compute.backwardS);
    line("recompute", r.compute.recomputeS);
    if (r.compute.hostStallS > 0) line("  fwd/bwd: host idle", r.compute.hostStallS);
    if (r.compute.offloadWaitS > 0) line("  fwd/bwd: offload wait", r.compute.offloadWaitS);
    line("optimizer", r.compute.optimizerS);
    line("exposed communication", r.exposedCommS);
    line("pipeline bubble", r.bubbleS);
    appendOverhead(o, r.overheadS, r.stepTimeS, 22);
    appendSoftmaxBound(o, s);
    appendCommunication(o, r);
    if (r.moe.active) appendMoe(o, s, r.moe);
    appendMemory(o, r.memory, nullptr);
    return o;
}

} // namespace madmax
