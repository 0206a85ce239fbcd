// Results as JSON: the stable keys of `madmax evaluate --json` (docs/reference/cli.md).
#include "madmax/scenario_io.hpp"

namespace madmax {

using nlohmann::json;

/// A serving result: latency, throughput, the decode round by cause and both roofline sides,
/// prefill, disaggregation, speculation and cost.
static json inferenceJson(const InferenceResult& i) {
    return {{"ttft_s", i.ttftS},
                        {"tpot_s", i.tpotS},
                        {"e2e_latency_s", i.e2eLatencyS},
                        {"output_tokens_per_s", i.outputTokensPerS},
                        {"output_tokens_per_s_per_gpu", i.outputTokensPerSPerGpu},
                        {"requests_per_s", i.requestsPerS},
                        {"batch", i.batch},
                        {"max_batch_that_fits", i.maxBatchThatFits},
                        {"meets_objectives", i.meetsObjectives},
                        {"kv_bytes_per_token", i.kvBytesPerToken},
                        {"kv_bytes_per_sequence", i.kvBytesPerSequence},
                        {"decode",
                         {{"weight_read_s", i.decodeWeightReadS},
                          {"kv_read_s", i.decodeKvReadS},
                          {"compute_s", i.decodeComputeS},
                          {"comm_s", i.decodeCommS},
                          {"overhead_s", i.decodeOverheadS},
                          {"prefill_per_iteration_s", i.prefillPerIterationS},
                          {"draft_s", i.draftS},
                          {"roofline_sides",
                           {{"weight_read_s", i.decodeWeightSideS},
                            {"gemm_math_s", i.decodeGemmSideS},
                            {"kv_read_s", i.decodeKvSideS},
                            {"attention_math_s", i.decodeAttentionSideS}}}}},
                        {"tokens_per_step", i.tokensPerStep},
                        {"kv_transfer_bytes", i.kvTransferBytes},
                        {"kv_transfer_s", i.kvTransferS},
                        {"input_tokens_per_s", i.inputTokensPerS},
                        {"pool_load", i.poolLoad},
                        {"prefill_queue_s", i.prefillQueueS},
                        {"dollars_per_million_tokens", i.dollarsPerMillionTokens},
                        {"joules_per_token", i.joulesPerToken},
                        {"benchmark_makespan_s", i.makespanS},
                        {"benchmark_waves", i.waves},
                        {"prefill",
                         {{"compute_s", i.prefillComputeS},
                          {"comm_s", i.prefillCommS},
                          {"all_to_all_s", i.prefillAllToAllS},
                          {"overhead_s", i.prefillOverheadS},
                          {"prefix_load_s", i.prefixLoadS},
                          {"prefix_load_wait_s", i.prefixLoadWaitS},
                          {"prefix_load_gbps", i.prefixLoadBytesPerS / 1e9}}}};
}

/// Communication by parallel dimension, by collective, and each non-zero pair.
static json commJson(const Result& r) {
    json byDim = json::object(), byColl = json::object(), detail = json::array();
    for (int d = 0; d < kParallelDimCount; ++d) {
        const CommTime t = r.dimTotal(ParallelDim(d));
        byDim[std::string(toString(ParallelDim(d)))] = {{"serialized_s", t.serializedS},
                                                        {"exposed_s", t.exposedS}};
        for (int c = 0; c < kCollectiveCount; ++c) {
            const CommTime& ct = r.comm[d][c];
            if (ct.serializedS <= 0 && ct.exposedS <= 0) continue;
            detail.push_back({{"dimension", std::string(toString(ParallelDim(d)))},
                              {"collective", std::string(toString(Collective(c)))},
                              {"serialized_s", ct.serializedS},
                              {"exposed_s", ct.exposedS}});
        }
    }
    for (int c = 0; c < kCollectiveCount; ++c) {
        const CommTime t = r.collectiveTotal(Collective(c));
        byColl[std::string(toString(Collective(c)))] = {{"serialized_s", t.serializedS},
                                                        {"exposed_s", t.exposedS}};
    }
    return {{"by_dimension", byDim}, {"by_collective", byColl}, {"detail", detail}};
}

static json memoryJson(const MemoryBreakdown& m) {
    return {{"weights_bytes", m.weightsBytes},
            {"grads_bytes", m.gradsBytes},
            {"optimizer_bytes", m.optimizerBytes},
            {"activations_bytes", m.activationsBytes},
            {"reserve_bytes", m.reserveBytes},
            {"total_bytes", m.totalBytes()},
            {"capacity_bytes", m.capacityBytes},
            {"margin_bytes", m.marginBytes()},
            {"fits", m.fits()}};
}

static json moeJson(const MoeResult& e) {
    return {{"local_experts", e.localExperts},
            {"expert_data_parallel", e.expertDataParallel},
            {"routed_copies_per_gpu", e.routedCopiesPerGpu},
            {"dispatch_s", e.dispatchS},
            {"combine_s", e.combineS},
            {"dispatch_scale_up_bytes", e.dispatchScaleUpBytes},
            {"dispatch_scale_out_bytes", e.dispatchScaleOutBytes},
            {"combine_scale_up_bytes", e.combineScaleUpBytes},
            {"combine_scale_out_bytes", e.combineScaleOutBytes},
            {"all_to_all_per_step_s", e.a2aPerStepS},
            {"all_to_all_exposed_per_step_s", e.a2aExposedPerStepS},
            {"token_drop_rate", e.tokenDropRate},
            {"expert_weights_bytes", e.expertWeightsBytes}};
}

static json dlrmJson(const DlrmResult& x) {
    return {{"group_size", x.groupSize},
            {"replicas", x.replicas},
            {"lookup_bytes_critical", x.lookupBytesCritical},
            {"lookup_bytes_mean", x.lookupBytesMean},
            {"lookup_s", x.lookupFwdS},
            {"embedding_backward_s", x.embBackwardS},
            {"dense_forward_s", x.denseForwardS},
            {"dense_backward_s", x.denseBackwardS},
            {"interaction_s", x.interactionS},
            {"per_table_copies_s", x.eagerCopiesS},
            {"input_load_s", x.inputLoadS},
            {"pooled_all_to_all_fwd_s", x.a2aFwdS},
            {"pooled_all_to_all_bwd_s", x.a2aBwdS},
            {"row_wise_comm_s", x.rowwiseCommS},
            {"ids_all_to_all_s", x.idsA2aS},
            {"replica_sync_s", x.replicaSyncS},
            {"dp_tables_sync_s", x.dpTableSyncS},
            {"sparse_exposed_s", x.sparseExposedS},
            {"dense_all_reduce_s", x.denseAllReduceS},
            {"dense_all_reduce_exposed_s", x.denseAllReduceExposedS},
            {"table_bytes_critical", x.tableBytesCritical},
            {"table_bytes_mean", x.tableBytesMean},
            {"imbalance", x.imbalance},
            {"all_to_all_bytes_per_gpu", x.a2aBytesPerGpu}};
}

static json timelineJson(const std::vector<TimelineEvent>& timeline) {
    json tl = json::array();
    for (const auto& e : timeline) {
        json ev = {{"label", e.label},
                   {"lane", e.lane == Lane::Compute ? "compute"
                            : e.lane == Lane::Comm  ? "comm"
                                                    : "dp_comm"},
                   {"kind", std::string(toString(e.kind))},
                   {"start_s", e.startS},
                   {"end_s", e.endS}};
        if (e.isComm) {
            ev["dimension"] = std::string(toString(e.dim));
            ev["collective"] = std::string(toString(e.collective));
        }
        tl.push_back(ev);
    }
    return tl;
}

json toJson(const Result& r) {
    json out = {{"step_time_s", r.stepTimeS},
                {"samples_per_s", r.samplesPerS},
                {"tokens_per_s", r.tokensPerS},
                {"tokens_per_s_per_gpu", r.tokensPerSPerGpu},
                {"model_tflops_per_gpu", r.modelTflopsPerGpu},
                {"hardware_tflops_per_gpu", r.hardwareTflopsPerGpu},
                {"mfu", r.mfu},
                {"hfu", r.hfu},
                {"compute_s", r.computeS},
                {"exposed_comm_s", r.exposedCommS},
                {"serialized_comm_s", r.serializedCommS()},
                {"bubble_s", r.bubbleS},
                {"overhead_s", r.overheadS},
                {"compute",
                 {{"forward_s", r.compute.forwardS},
                  {"backward_s", r.compute.backwardS},
                  {"recompute_s", r.compute.recomputeS},
                  {"host_stall_s", r.compute.hostStallS},
                  {"host_stall_forward_s", r.compute.hostStallForwardS},
                  {"offload_wait_s", r.compute.offloadWaitS},
                  {"offload_wait_forward_s", r.compute.offloadWaitForwardS},
                  {"optimizer_s", r.compute.optimizerS}}},
                {"comm", commJson(r)},
                {"memory", memoryJson(r.memory)},
                {"critical_stage", r.criticalStage},
                {"micro_batches", r.microBatches},
                {"forward_per_micro_batch_s", r.forwardPerMicroBatchS},
                {"backward_per_micro_batch_s", r.backwardPerMicroBatchS},
                {"model_flops_per_step", r.modelFlopsPerStep},
                {"hardware_flops_per_step", r.hardwareFlopsPerStep},
                {"conventions", "model FLOPs = 3 x forward GEMM FLOPs + full (non-causal) "
                                "attention 4·s·h per token per layer "
                                "+ LM head (Megatron/PaLM); hardware FLOPs add recomputed forward "
                                "work; MFU/HFU against the "
                                "dense peak of the workload precision"}};
    if (r.isInference) {
        out["inference"] = inferenceJson(r.inference);
        out["memory"]["kv_cache_bytes"] = r.memory.kvCacheBytes;
    }
    if (r.moe.active) out["moe"] = moeJson(r.moe);
    if (r.dlrmResult.active) out["dlrm"] = dlrmJson(r.dlrmResult);
    if (!r.timeline.empty()) out["timeline"] = timelineJson(r.timeline);
    return out;
}

} // namespace madmax
