// One serving replica's physics (docs/developer/model.md §6; Pope et al. 2022): the costs of
// a layer for a number of token rows (attention with its KV-cache reads, the MLP or the MoE
// block with its all-to-alls, the TP all-reduces), a stage, a decode round with its drafts and
// interleaved prefills, TTFT and the KV cache a prompt sends to a decode pool. Everything that
// does not depend on the batch is computed once per replica (Serving's constructor).
// evaluateInference (inference.cpp) solves the batch and assembles the result from it.
#pragma once

#include "engine/op_cost.hpp"
#include "serving/costs.hpp"
#include "madmax/collectives.hpp"
#include "madmax/flops.hpp"
#include "madmax/layer_gemms.hpp"

#include <algorithm>
#include <cmath>

namespace madmax::detail::serving {

/// A GEMM's row count with its logarithm, taken once for the GEMMs of a layer that share it:
/// the efficiency curve is looked up at log2(M) + the weight's log2(2·N·K) (Weight).
struct Rows {
    double m, log2m;
    explicit Rows(double rows) : m(rows), log2m(std::log2(rows)) {}
    /// With the logarithm from parts the caller keeps (a decode round's rows: its sequences'
    /// logarithm plus that of the rows each verifies).
    Rows(double rows, double log2rows) : m(rows), log2m(log2rows) {}
};

/// Everything about one replica that does not depend on the batch. Its layer's weight GEMMs
/// (WeightSet, costs.hpp) are its base: the attention projections and output, the dense MLP's,
/// a routed expert's, the shared experts', the router and the LM head.
struct Serving : WeightSet {
    const Scenario& s;
    const Gpu& gpu;
    double t, p, h, f, V, qDim, kvDim, layers; ///< per GPU (÷TP) and per stage (÷PP)
    double moeLayers = 0, denseLayers = 0;     ///< of the fullest stage's layers
    GroupLayout epGroup;
    double wB, aB, kvB, peak, peak16, gemmScale, bw, etaMem;
    GroupLayout tpGroup;
    AllReducePlan tpAllReduce; ///< the TP group's all-reduce, prepared once
    P2pPlan stageSend;         ///< a pipeline stage's send to the next, prepared once
    double log2RowBytes = 0;   ///< log2 of one token row's activations, h · 2 bytes
    double log2VerifyRows = 0; ///< log2 of the rows a sequence verifies per decode pass
    double weightsBytes, kvPerToken, reservedContext, residentContext;
    double input, output;
    /// Prompt tokens computed per request (the prefix cache holds the rest) and the mean context
    /// they attend: the cached prefix and, causally, half the computed part.
    double computedInput, prefillContext;
    GemmPrecision gemmPrecision{}; ///< the replica's GEMMs' precision (op_cost.hpp)
    /// The LM head's and the router's: 16-bit in a checkpoint quantized below 16 bits (DeepSeek-V3
    /// §3.3.1 keeps 'the embedding module, the output head, MoE gating modules' in BF16;
    /// NVIDIA's ModelOpt FP8/FP4 checkpoints list lm_head in exclude_modules).
    GemmPrecision gemmPrecision16{};
    double verifyRows;    ///< rows per sequence in a decode pass: 1 + the draft tokens
    double tokensPerStep; ///< tokens a sequence gains per decode pass (speculation's closed form)
    bool twoBatch = false; ///< two-batch overlap: each layer runs as two micro-batches
    double localExperts = 1; ///< expert slots per EP rank: (experts + redundant) / EP
    double logUntouched = 0; ///< ln(1 − 1/localExperts) (−∞ for one: every copy touches it)
    /// Expanded MLA decode (workload mla_decode): per cached latent and step, the up-projection's
    /// FLOPs to this GPU's heads' keys and values, log2 of them (its GEMM-efficiency key), and
    /// the 16-bit keys and values it writes and the attention reads back. 0 when absorbed.
    double mlaUpFlopsPerKey = 0, mlaUpLog2FlopsPerKey = 0, mlaExpandedBytesPerKey = 0;
    /// The attention core's FLOPs per score: prefill's 2·(d_qk + d_v); decode's the same, except
    /// absorbed MLA's over the latent, 2·(2·d_c + d_rope), in its own kernel (calibration
    /// mla_decode_*, FlashMLA's): its time over the fused kernel's, its KV reads' efficiency.
    double prefillFlopsPerScore = 0, decodeFlopsPerScore = 0;
    double decodeAttentionScale = 1, decodeKvEfficiency = 0;
    /// Offloaded prefix cache (prefix_cache_tier host): a prompt's hits' KV loaded here, s.
    double prefixLoadS = 0;
    double promptLoadWaitS = 0; ///< of promptS: the prompt waiting on that load (not hidden)
    Costs promptStage; ///< one prompt's prefill through the fullest stage (set last)
    double promptS = 0;    ///< one prompt through every stage, with the stages' sends
    double kvTransfer = 0; ///< one prompt's KV cache to the decode pool (kvTransferTimeS)

    PrefillMemo* memo = nullptr; ///< a serving search's kept prefill passes (or none)

    explicit Serving(const Scenario& sc, PrefillMemo* kept = nullptr)
        : s(sc), gpu(sc.system.gpu), memo(kept) {
        const Model& m = s.model;
        const auto& in = s.workload.inference;
        t = s.strategy.tp;
        p = s.strategy.pp;
        h = double(m.hidden);
        f = double(m.ffnHidden);
        V = double(m.vocab);
        qDim = double(m.heads) * m.headDim / t;
        kvDim = std::ceil(double(m.kvHeads) / t) *
                m.headDim; // KV heads are replicated when TP exceeds them
        if (m.mla) kvDim = double(m.kvCacheElementsPerTokenPerLayer()) / 2.0;
        layers = std::ceil(double(m.layers) / p);
        wB = bytesPerElement(in.weightPrecision);
        aB = 2.0;
        kvB = bytesPerElement(in.kvPrecision);
        peak = gpu.peak(s.workload.precision);
        peak16 = gpu.peak16();
        gemmScale =
            bytesPerElement(s.workload.precision) < 2 ? gpu.calibration.lowPrecisionGemmScale : 1.0;
        bw = gpu.hbmBytesPerS;
        etaMem = gpu.calibration.decodeMemoryEfficiency;
        setCommPlans();
        input = in.inputTokens;
        output = in.outputTokens;
        computedInput = std::max(1.0, std::round((1.0 - in.prefixCacheHit) * input));
        prefillContext = (input - computedInput) + computedInput / 2;
        verifyRows = 1.0 + in.draftTokens;
        log2VerifyRows = std::log2(verifyRows);
        // Below 16 bits the efficiency is that of the 16-bit GEMM of equal ideal time; the
        // activation casts are fused into the preceding kernels' epilogues (TensorRT-LLM).
        gemmPrecision = {peak, gemmScale, wB, aB, aB, etaMem, peak16 / peak};
        gemmPrecision16 = wB < 2 ? GemmPrecision::sixteenBit(peak16, etaMem) : gemmPrecision;
        keptOrSetWeights(m);
        tokensPerStep = in.tokensPerStep();
        twoBatch = s.strategy.moeA2aOverlap && m.isMoe();
        localExperts = double(m.moe.experts + s.strategy.redundantExperts) / s.strategy.ep;
        if (m.isMoe()) logUntouched = std::log1p(-1.0 / localExperts);
        setAttentionForms(m, in.mlaDecode);

        // The fullest stage: the MoE layers (where present) are its heavier layers.
        moeLayers = std::min(layers, double(m.moeLayerCount()));
        denseLayers = layers - moeLayers;
        epGroup = layoutGroup(s.system, s.strategy.ep, s.strategy.etp);
        const double attnW = (m.attentionParamsPerLayer() - h) / t * wB;
        const double denseW = attnW + (m.gatedMlp ? 3.0 : 2.0) * h * f / t * wB;
        const double moeW = m.isMoe() ? attnW + (m.moeSharedParamsPerLayer() - h) / t * wB +
                                            m.moeRoutedParamsPerLayer() * expertSlots() /
                                                (double(s.strategy.ep) * s.strategy.etp) * wB
                                      : 0.0;
        // The embedding and the LM head stay in 16 bits below a 16-bit checkpoint (gemmPrecision16).
        weightsBytes = denseLayers * denseW + moeLayers * moeW +
                       V * h / t * std::max(wB, 2.0) * (p == 1 ? (m.tiedEmbeddings ? 1 : 2) : 1);
        // MLA caches the KV latent and the shared rope key, whole on every TP rank.
        kvPerToken = layers * (m.mla ? m.kvCacheElementsPerTokenPerLayer() : 2.0 * kvDim) * kvB;
        // Admission reserves the prompt and the mean output (paged KV blocks absorb the spread,
        // inside the kv_cache_fraction headroom); the cache holds on average the prompt and
        // E[o²]/(2E[o]) generated tokens per sequence.
        const double reserveOut = output;
        double residentOut = (output + 1) / 2;
        if (in.outputDistribution == LengthDistribution::Uniform)
            residentOut = 2.0 / 3.0 * output; // o ~ U[0, 2·mean]
        else if (in.outputDistribution == LengthDistribution::Exponential)
            residentOut = output;
        reservedContext = input + reserveOut;
        residentContext = input + residentOut;
        prefixLoadS = prefixHitsLoadS();
        // One prompt alone through the fullest stage (TTFT's service part): the same for
        // every batch, so computed once, not on each step of a batch solve.
        promptStage = prefillStage(computedInput, prefillContext, 1);
        promptLoadWaitS = p * (withPrefixLoad(promptStage.total(), 1) - promptStage.total());
        promptS = p * (promptStage.total() + p2p(computedInput)) + promptLoadWaitS;
        kvTransfer = kvTransferTimeS();
    }

    /// The attention core's FLOPs per score in prefill and decode, and for expanded MLA decode
    /// its per-key costs: W_UK and W_UV, d_c → (heads ÷ TP) × (d_nope + d_v).
    void setAttentionForms(const Model& m, MlaDecode form) {
        prefillFlopsPerScore = decodeFlopsPerScore = attentionFlopsPerScore(m);
        decodeKvEfficiency = etaMem;
        if (!m.mla) return;
        if (form == MlaDecode::Absorbed) {
            decodeFlopsPerScore = 2.0 * double(2 * m.mlaShape.kvLoraRank + m.mlaShape.qkRopeDim);
            const ComputeCalibration& cal = gpu.calibration;
            decodeAttentionScale = cal.attentionEfficiency / cal.mlaDecodeEfficiency;
            decodeKvEfficiency = cal.mlaDecodeMemoryEfficiency;
            return;
        }
        const double n = m.heads / t * double(m.mlaShape.qkNopeDim + m.mlaShape.vHeadDim);
        mlaUpFlopsPerKey = 2 * n * double(m.mlaShape.kvLoraRank);
        mlaUpLog2FlopsPerKey = std::log2(mlaUpFlopsPerKey);
        mlaExpandedBytesPerKey = 2 * n * aB;
    }

    /// The TP group's all-reduce and a stage's send, prepared once for every message size.
    void setCommPlans() {
        tpGroup = layoutGroup(s.system, s.strategy.tp, 1);
        tpAllReduce = AllReducePlan(s.system, tpGroup);
        stageSend = P2pPlan(s.system, s.strategy.tp);
        log2RowBytes = std::log2(h * aB);
    }

    /// The weights' shapes, keyed logarithms and per-row rates depend on the degrees and the
    /// precisions only: a search's memo keeps them across the configurations that share those.
    void keptOrSetWeights(const Model& m) {
        const PrefillMemo::WeightKey key{s.strategy.tp, s.strategy.etp,
                                         gemmPrecision.efficiencyKey, wB, gemmScale, wB < 2};
        if (const WeightSet* kept = memo ? memo->findWeights(key) : nullptr) {
            static_cast<WeightSet&>(*this) = *kept;
            return;
        }
        setWeights(m);
        if (memo) memo->addWeights(key, *this);
    }

    /// The layer's weight GEMMs on this GPU (layer_gemms.hpp), keyed for the efficiency lookup,
    /// with their bounds' rates at their precision (the head and router in 16 bits below a
    /// 16-bit checkpoint).
    void setWeights(const Model& m) {
        const double key = gemmPrecision.efficiencyKey;
        auto weight = [&](const GemmShape& g, bool sixteen = false) {
            const GemmPrecision& p = sixteen ? gemmPrecision16 : gemmPrecision;
            return Weight(g, key, detail::GemmRates(gpu, p, g.n, g.k), sixteen);
        };
        const AttentionGemms attention = attentionGemms(m, t);
        projections = attention.count;
        for (int i = 0; i < projections; ++i)
            attnProj[std::size_t(i)] = weight(attention.projections[std::size_t(i)]);
        attnOut = weight(attention.output);
        const MlpGemms mlp = mlpGemms(m, f, t);
        mlpUp = weight(mlp.up);
        mlpDown = weight(mlp.down);
        head = weight({V / t, h}, wB < 2);
        if (!m.isMoe()) return; // (the expert, shared-expert and router GEMMs are MoE's)
        const MlpGemms expert = mlpGemms(m, double(m.moe.expertFfn), s.strategy.etp);
        expertUp = weight(expert.up);
        expertDown = weight(expert.down);
        const MlpGemms shared = mlpGemms(m, double(m.moe.sharedExperts) * m.moe.expertFfn, t);
        sharedUp = weight(shared.up);
        sharedDown = weight(shared.down);
        router = weight(routerGemm(m), wB < 2);
    }

    /// Expert copies held per routed expert: (experts + redundant) / experts.
    double expertSlots() const {
        const MoeShape& moe = s.model.moe;
        return moe.experts > 0 ? double(moe.experts + s.strategy.redundantExperts) / moe.experts
                               : 1.0;
    }

    /// One GEMM of M rows; memory-bound time is charged to weight reads, compute-bound to compute.
    /// `math`: the rows the tensor cores compute when padding adds some (an expert's, below).
    void gemm(Costs& c, const Rows& M, const Weight& w, double overheadS,
              const Rows* math = nullptr) const {
        const Rows& computed = math ? *math : M;
        const GemmBounds g = w.rates.at(
            M.m, gpu.calibration.gemmEfficiency.atLog2(computed.log2m + w.log2KeyedFlopsPerRow),
            computed.m);
        if (g.memoryS >= g.computeS)
            c.weight += g.memoryS;
        else
            c.compute += g.computeS;
        c.weightSide += g.memoryS;
        c.gemmSide += g.computeS;
        c.overhead += overheadS;
    }

    /// Expanded MLA decode (workload mla_decode): each sequence's cached latents, `keys` of
    /// them, up-projected once a step in one GEMM of that many rows, and the keys and values it
    /// writes read back by the attention. Out of line: the absorbed default never calls it.
    [[gnu::noinline]] void expandedMlaDecode(double keys, double& computeS, double& memoryS) const {
        computeS += keys * mlaUpFlopsPerKey /
                    (peak16 * gpu.calibration.gemmEfficiency.atLog2(std::log2(keys) +
                                                                    mlaUpLog2FlopsPerKey));
        memoryS += keys * mlaExpandedBytesPerKey / (bw * etaMem);
    }

    /// The attention half of a layer for `rows` tokens, each attending `context` keys.
    Costs attention(const Rows& M, double context, bool decode, double ov) const {
        Costs c;
        const Model& m = s.model;
        const double rows = M.m;
        // The projections and the output projection (madmax/layer_gemms.hpp); MLA's decode
        // attention core works on the cached latents (below).
        for (int i = 0; i < projections; ++i) gemm(c, M, attnProj[std::size_t(i)], ov);
        gemm(c, M, attnOut, ov);
        // Attention: decode reads the cached K and V of every sequence (bytes-bound); prefill is
        // a causal flash-attention pass.
        const double heads = m.heads / t;
        const double scores = rows * context * heads; // one softmax exponential each
        // Absorbed MLA decode attends the latent itself (a 'key' of d_c + d_rope and a 'value'
        // of d_c per score); expanded, and prefill always, the heads' own.
        const double attnFlops = scores * (decode ? decodeFlopsPerScore : prefillFlopsPerScore);
        double tc = detail::attentionComputeS(gpu, peak16, attnFlops, scores) *
                    (decode ? decodeAttentionScale : 1.0);
        double tm = decode ? rows * context * 2 * kvDim * kvB / (bw * decodeKvEfficiency) : 0.0;
        if (decode && mlaUpFlopsPerKey > 0)
            expandedMlaDecode(rows / verifyRows * context, tc, tm);
        if (tm >= tc)
            c.kv += tm;
        else
            c.compute += tc;
        c.kvSide += tm;
        c.attentionSide += tc;
        return c;
    }

    /// A MoE block for `rows` tokens of this GPU's replica: its experts receive rows·k·ETP/TP
    /// copies (× the load imbalance) spread over E/EP local experts; each expert touched is read
    /// once, expected E_l(1 − (1 − 1/E_l)^copies) of them; dispatch and combine all-to-alls.
    Costs moeBlock(const Rows& M, double ov, bool decode) const {
        const double rows = M.m;
        Costs c;
        const Model& m = s.model;
        const Strategy& st = s.strategy;
        const MoeShape& moe = m.moe;
        const double local = localExperts;
        const double load = moe.criticalLoad(st.ep);
        const double copies = rows * moe.topK * st.etp / t * load;
        // E_l(1 − (1 − 1/E_l)^copies) = −E_l·expm1(copies·ln(1 − 1/E_l)), ln once per replica.
        const double touched = copies > 0 ? -local * std::expm1(copies * logUntouched) : 0.0;
        if (touched > 0) {
            // Each touched expert's rows, computed in whole tiles (groupRowsComputed) when
            // they are routed tokens; a single expert is a dense MLP, not padded.
            const Rows perExpert(copies / touched);
            const double padded = moe.experts > 1 ? groupRowsComputed(perExpert.m) : perExpert.m;
            const Rows tiled = padded == perExpert.m ? perExpert : Rows(padded);
            Costs e;
            gemm(e, perExpert, expertUp, 0.0, &tiled);
            gemm(e, perExpert, expertDown, 0.0, &tiled);
            c += e.scaled(touched);
            c.overhead += 2 * ov; // grouped GEMMs
        }
        if (moe.sharedExperts > 0) {
            gemm(c, M, sharedUp, ov);
            gemm(c, M, sharedDown, ov);
        }
        if (moe.experts > 1) gemm(c, M, router, ov);
        // Dispatch (optionally FP8) and combine over the EP group; with two-batch overlap they
        // hide behind the other micro-batch's work, up to its length. While hidden they hold
        // SMs (strategy moe_comm_sm_fraction; DeepEP's normal kernels, which prefill runs),
        // slowing that work by the share they hold; DeepEP's low-latency kernels, which decode
        // runs, issue RDMA and free every SM while in flight (DeepEP README; the SGLang team's
        // decode breakdown, LMSYS 2025-05-05: 'no resource contention with computation').
        MoeA2aRequest req = moeA2aRequestFor(moe, st, gpu.calibration);
        req.tokens = rows * st.etp / t * load;
        req.bytesPerToken = st.moeFp8Dispatch ? h * (1.0 + 4.0 / 128.0) : h * aB;
        const MoeA2aTraffic dispatch = moeAllToAll(s.system, epGroup, req);
        // The combine carries 16-bit tokens: the same traffic, its transfer scaled by the bytes
        // per token (the dispatch's time again unless that was FP8).
        const double transfer = dispatch.timeS - dispatch.latencyS;
        double a2a = dispatch.timeS +
                     (st.moeFp8Dispatch
                          ? dispatch.latencyS + transfer * (h * aB / req.bytesPerToken)
                          : dispatch.timeS);
        if (st.moeA2aOverlap) {
            const double hidden = std::min(a2a, c.total());
            const bool smFree = decode && st.dispatcher == MoeDispatcher::DeepEp;
            if (!smFree) c.compute += st.moeCommSmFraction * hidden;
            a2a -= hidden;
        }
        c.comm += a2a;
        c.a2a += a2a;
        return c;
    }

    /// A stage's two kinds of layer for the same tokens: the dense one and the MoE one.
    struct LayerKinds {
        Costs dense, moe;
        LayerKinds& operator+=(const LayerKinds& o) {
            dense += o.dense, moe += o.moe;
            return *this;
        }
        LayerKinds scaled(double f) const { return {dense.scaled(f), moe.scaled(f)}; }
    };

    /// `microBatch(rows)` for a layer's `rows` tokens, as the layer runs them. With two-batch
    /// overlap (an MoE model, strategy moe_a2a_overlap) the batch runs as two micro-batches,
    /// as DeepSeek's inference system and SGLang's TBO split it: every kernel runs once per
    /// half, so a memory-bound GEMM reads its weights twice (the SGLang team's TBO ablation,
    /// LMSYS 2025-05-05: without TBO 'GEMM benefit[s] from a larger effective batch size').
    template <typename T, typename MicroBatch>
    T inTwoBatches(double rows, MicroBatch microBatch) const {
        if (!twoBatch || rows < 2) return microBatch(rows);
        const double first = std::ceil(rows / 2);
        T c = microBatch(first);
        // Equal halves cost the same: the first's costs twice (exactly the sum of the two).
        if (first == rows - first) return c.scaled(2.0);
        c += microBatch(rows - first);
        return c;
    }

    /// One layer (dense, or MoE) for `rows` tokens, each attending `context` keys on average.
    Costs layer(const Rows& M, double context, bool decode, bool moe) const {
        // The one-batch case directly: through the generic helper the dense model's single
        // evaluation ran 14% slower (docs/developer/benchmarks.md).
        if (!twoBatch || M.m < 2) return microBatchLayer(M, context, decode, moe);
        return inTwoBatches<Costs>(
            M.m, [&](double r) { return microBatchLayer(Rows(r), context, decode, moe); });
    }
    /// Both kinds of layer for the same tokens (a stage that holds both).
    LayerKinds layerKinds(double rows, double context, bool decode) const {
        return inTwoBatches<LayerKinds>(
            rows, [&](double r) { return microBatchLayers(r, context, decode); });
    }

    /// What every kind of layer runs for one micro-batch of `rows` tokens: attention, the
    /// norms' and residuals' kernels, the TP all-reduces.
    Costs sharedLayerPart(const Rows& M, double context, bool decode, double ov) const {
        const double rows = M.m;
        Costs c = attention(M, context, decode, ov);
        // Norms, activation, residuals, RoPE, KV append: a few memory-bound kernels.
        c.overhead += 4 * ov + 10 * rows * h * aB / (bw * etaMem);
        c.comm += 2 * tpAllReduce.timeS(rows * h * aB, M.log2m + log2RowBytes);
        return c;
    }
    double layerOverheadS(bool decode) const {
        return decode ? gpu.calibration.decodeKernelOverheadS : gpu.calibration.kernelLaunchS;
    }

    /// One micro-batch of `rows` tokens through one layer.
    Costs microBatchLayer(const Rows& M, double context, bool decode, bool moe) const {
        const double ov = layerOverheadS(decode);
        Costs c = sharedLayerPart(M, context, decode, ov);
        if (moe) {
            c += moeBlock(M, ov, decode);
        } else {
            gemm(c, M, mlpUp, ov);
            gemm(c, M, mlpDown, ov);
        }
        return c;
    }
    /// One micro-batch through both kinds of layer, their shared part costed once.
    LayerKinds microBatchLayers(double rows, double context, bool decode) const {
        const double ov = layerOverheadS(decode);
        const Rows M(rows);
        LayerKinds out{sharedLayerPart(M, context, decode, ov), {}};
        out.moe = out.dense;
        gemm(out.dense, M, mlpUp, ov);
        gemm(out.dense, M, mlpDown, ov);
        out.moe += moeBlock(M, ov, decode);
        return out;
    }

    /// One pass of the fullest stage for `rows` tokens (the LM head for `headRows` of them).
    Costs stage(double rows, double context, bool decode, double headRows) const {
        return stage(Rows(rows), context, decode, headRows);
    }
    Costs stage(const Rows& M, double context, bool decode, double headRows) const {
        const double rows = M.m; // (a decode pass's head takes every row: one logarithm for both)
        Costs c = denseLayers > 0 && moeLayers > 0
                      ? bothKindsOfLayers(rows, context, decode)
                      : layer(M, context, decode, moeLayers > 0)
                            .scaled(moeLayers > 0 ? moeLayers : denseLayers);
        gemm(c, headRows == rows ? M : Rows(headRows), head, layerOverheadS(decode));
        return c;
    }
    /// A stage's dense and MoE layers for the same tokens, summed.
    Costs bothKindsOfLayers(double rows, double context, bool decode) const {
        const LayerKinds l = layerKinds(rows, context, decode);
        Costs c = l.dense.scaled(denseLayers);
        c += l.moe.scaled(moeLayers);
        return c;
    }

    /// A prefill pass of the fullest stage, kept in the search's memo when there is one.
    Costs prefillStage(double rows, double context, double headRows) const {
        if (!memo) return stage(rows, context, false, headRows);
        const Strategy& st = s.strategy;
        const auto& in = s.workload.inference;
        const PrefillMemo::Key key{st.tp, st.pp, st.dp, st.ep, st.etp, st.redundantExperts,
                                  s.workload.precision, in.weightPrecision, in.kvPrecision,
                                  rows, context, headRows};
        if (const Costs* kept = memo->find(key)) return *kept;
        const Costs c = stage(rows, context, false, headRows);
        memo->add(key, c);
        return c;
    }

    /// One prompt's prefix-cache hits loaded from an offload tier into this GPU: their tokens
    /// times its KV bytes per token, at the tier's rate (the host link unless one is given).
    double prefixHitsLoadS() const {
        const auto& in = s.workload.inference;
        // (A decode pool computes no prompt: its KV cache arrives from the prefill pool.)
        if (in.prefixCacheTier != PrefixCacheTier::Host || in.phase == ServingPhase::Decode)
            return 0;
        return (input - computedInput) * kvPerToken / prefixLoadRate();
    }
    /// The offload tier's read rate per GPU: its own, else the GPU's link to host memory.
    double prefixLoadRate() const {
        const auto& in = s.workload.inference;
        return in.prefixCacheLoadBytesPerS > 0 ? in.prefixCacheLoadBytesPerS
                                               : s.system.hostLinkBytesPerS;
    }

    /// A prefill pass of `prompts` prompts taking `computeS`, with their offloaded prefix hits
    /// loaded layer by layer ahead of the computation (as LMCache and Mooncake pipeline it): a
    /// two-stage pipeline over the stage's L layers, each layer's load before its compute, lasts
    /// max(C, D) + min(C, D)/L for computation C and load D in all. No load: C.
    double withPrefixLoad(double computeS, double prompts) const {
        if (prefixLoadS <= 0) return computeS;
        const double load = prompts * prefixLoadS;
        return std::max(computeS, load) + std::min(computeS, load) / layers;
    }

    double p2p(double rows) const { return p <= 1 ? 0.0 : stageSend.timeS(rows * h * aB); }
    double p2p(const Rows& M) const {
        return p <= 1 ? 0.0 : stageSend.timeS(M.m * h * aB, M.log2m + log2RowBytes);
    }

    struct Iteration {
        Costs decode;           ///< one decode round for the batch (with the drafts)
        double draftS = 0;      ///< of decode: the draft passes (speculative decoding)
        double prefillPerIterS; ///< prefills of the requests admitted per round
        double p2pS;
        double roundS() const { return decode.total() + prefillPerIterS + p2pS; }
    };

    /// The draft passes of a round: each of the k draft tokens runs the draft's layers (of the
    /// model's heavier kind: DeepSeek-V3's MTP module is one MoE block) and the head, one row per
    /// sequence, one after another.
    Costs drafts(const Rows& M) const {
        const int k = s.workload.inference.draftTokens;
        if (k <= 0) return {};
        const double ov = gpu.calibration.decodeKernelOverheadS;
        Costs one = layer(M, residentContext, true, moeLayers > 0)
                        .scaled(s.workload.inference.draftLayers);
        gemm(one, M, head, ov);
        return one.scaled(k);
    }

    Iteration iteration(double batch) const {
        Iteration it;
        // With PP the batch is split into p micro-batches that circulate; a round visits every
        // stage once per micro-batch. With speculation each sequence verifies its drafts and
        // the next token in one pass: 1 + k rows.
        const double seqs = std::ceil(batch / p);
        const Rows S(seqs), R(seqs * verifyRows, S.log2m + log2VerifyRows);
        it.decode = stage(R, residentContext, true, R.m).scaled(p);
        const Costs d = drafts(S).scaled(p);
        it.draftS = d.total();
        it.decode += d;
        it.p2pS = p * p2p(R);
        it.prefillPerIterS = 0;
        if (s.workload.inference.phase == ServingPhase::Aggregated) {
            // Chunked prefill: prompts are batched up to the chunk budget; each round admits
            // batch · tokens per step / output new requests (continuous batching, steady state).
            it.prefillPerIterS = batch * tokensPerStep / output * prefillPerRequest(batch);
        }
        return it;
    }

    /// One request's share of a chunked prefill pass at this batch. Every batch that fills the
    /// chunk budget runs the same pass, so the last one is kept: a batch search probes several
    /// batches of one replica (each Serving is one evaluation's, never shared between threads).
    double prefillPerRequest(double batch) const {
        const double chunk = prefillChunk(batch);
        if (chunk != lastChunk) {
            lastChunk = chunk;
            const double prompts = chunk / computedInput;
            lastPerRequest =
                withPrefixLoad(prefillStage(chunk, prefillContext, prompts).total(), prompts) /
                prompts;
        }
        return lastPerRequest;
    }
    mutable double lastChunk = -1, lastPerRequest = 0;

    /// Computed prompt tokens in one prefill pass: the chunk budget, at least one prompt.
    double prefillChunk(double batch) const {
        return std::max(computedInput, std::min(double(s.workload.inference.prefillChunkTokens),
                                                batch * computedInput));
    }

    /// The KV cache of one prompt sent from a prefill GPU to a decode GPU over the scale-out
    /// network (disaggregation): its tokens times this GPU's bytes per token.
    double kvTransferBytes() const { return input * kvPerToken; }
    double kvTransferS() const { return kvTransfer; }
    double kvTransferTimeS() const {
        if (s.workload.inference.phase == ServingPhase::Aggregated) return 0;
        const long long offNode = s.system.tiers.empty() ? s.system.gpusPerNode
                                                         : s.system.tiers.front().gpus;
        return p2pTime(s.system, offNode, kvTransferBytes());
    }

    double ttft(const Iteration& it) const {
        // Aggregated: the prompt alone through every stage, after waiting on average half a
        // round. Prefill pool: the prompt, then its KV cache leaves. Decode pool: its share, the
        // KV cache arriving and half a round before the next token.
        const double prompt = promptS;
        switch (s.workload.inference.phase) {
        case ServingPhase::Prefill: return prompt + kvTransferS();
        case ServingPhase::Decode: return kvTransferS() + it.roundS() / 2;
        case ServingPhase::Aggregated: break;
        }
        return prompt + it.roundS() / 2;
    }

    double activationBytes(double batch) const {
        const double chunk =
            s.workload.inference.phase == ServingPhase::Decode ? batch * verifyRows : prefillChunk(batch);
        const Model& m = s.model;
        // The widest MLP a layer holds per GPU: a dense layer's f / TP, or an MoE layer's k
        // routed plus shared experts of f_e (the TP group's tokens split t/ETP ways among its
        // expert-DP ranks, each expert's width ETP ways: f_e / t per token either way).
        const double gates = m.gatedMlp ? 3.0 : 2.0;
        const double dense = !m.isMoe() || m.denseLayerCount() > 0 ? f / t : 0.0;
        const double experts =
            m.isMoe() ? double(m.moe.expertFfn) * (m.moe.topK + m.moe.sharedExperts) / t : 0.0;
        const double mlp = gates * std::max(dense, experts);
        // fp32 logits: a prefill pass's at each prompt's last token, a decode round's at every
        // row it verifies (speculation samples each draft position against them).
        const double logitRows =
            s.workload.inference.phase == ServingPhase::Prefill ? batch : batch * verifyRows;
        return chunk * (2 * h + qDim + 2 * kvDim + mlp) * aB + logitRows * V / t * 4.0;
    }
};

} // namespace madmax::detail::serving
