// FLOP counting conventions (docs/developer/model.md §1) shared by the engine, reports and validation.
#pragma once

#include "madmax/model.hpp"
#include "madmax/types.hpp"
#include "madmax/workload.hpp"

namespace madmax {

/// Forward FLOPs per token of one layer's attention projections: QKV 2h(a·d+2gd) and output
/// 2h·(a·d); MLA: twice its projection weights (DeepSeek-V2 §2.1, no weight absorption).
double attentionGemmFlopsPerToken(const Model& m);
/// Forward FLOPs per token of one dense layer's GEMMs: attention projections plus the MLP,
/// 4hf (plain) or 6hf (gated).
double layerGemmFlopsPerToken(const Model& m);
/// Forward FLOPs per token of one MoE layer's GEMMs: attention projections, the router 2hE and
/// k routed + shared experts of 4hf_e (plain) or 6hf_e (gated) each.
double moeLayerGemmFlopsPerToken(const Model& m);
/// Forward GEMM FLOPs per token of all layers (dense and MoE).
double layersGemmFlopsPerToken(const Model& m);
/// Forward tensor-core FLOPs of the attention core per score (one query-key pair of one head):
/// QKᵀ and PV, 2·(d_qk + d_v). Its softmax needs one exponential per score besides.
double attentionFlopsPerScore(const Model& m);
/// Share of layers with sliding-window attention.
double windowedLayerFraction(const Model& m);
/// Forward FLOPs per token of the attention core for a context of `context` tokens, averaged
/// over the layers, counted full (non-causal) as in Megatron's and PaLM's MFU convention:
/// 2·s·a·(d_qk + d_v) = 4·s·a·d for MHA; windowed layers see min(s, window) keys.
double attentionFlopsPerToken(const Model& m, double context);
/// Forward FLOPs per token of the LM head, 2hV.
double lmHeadFlopsPerToken(const Model& m);

/// Model FLOPs of one step (3 × forward; full attention), the numerator of MFU.
double modelFlopsPerStep(const Model& m, double globalBatch, double seqLen);
/// Hardware FLOPs of one step: model FLOPs plus recomputed forward work.
/// Forward FLOPs per token that full recompute of `denseLayers` dense and `moeLayers` MoE layers
/// runs again: their GEMMs and attention core.
double recomputeFlopsPerToken(const Model& m, int denseLayers, int moeLayers, double seqLen);
double hardwareFlopsPerStep(const Model& m, double globalBatch, double seqLen, Recompute r);

/// FLOPs of one training step with `f` frozen: the forward, the input gradients where
/// something below trains, the weight gradients of what trains; `hardware` adds recomputed
/// forward work. Nothing frozen: modelFlopsPerStep (or hardwareFlopsPerStep).
double trainingFlopsPerStep(const Model& m, const Frozen& f, double globalBatch, double seqLen,
                            Recompute r, bool hardware);

/// LoRA adapter parameters of one layer (all GPUs): rank r·(d_in + d_out) per adapted linear
/// layer — the attention's Q, K, V and output projections and, in a dense layer, the MLP's
/// matrices (MoE layers: attention only; experts carry none).
double loraParamsPerLayer(const Model& m, const Frozen& f, bool moeLayer);
/// LoRA adapter parameters of `denseLayers` dense and `moeLayers` MoE layers (all GPUs).
double loraParamsOf(const Model& m, const Frozen& f, int denseLayers, int moeLayers);
/// All layers' LoRA adapter parameters.
double loraParams(const Model& m, const Frozen& f);

/// GEMM FLOPs of one training step under `f` (no attention core, no recompute): what the
/// search's lower bound on step time divides by the peak.
double trainingGemmFlopsPerStep(const Model& m, const Frozen& f, double globalBatch,
                                double seqLen);

/// Megatron SC21 Eq. 3 (Narayanan et al.): 96·B·s·l·h²·(1 + s/6h + V/16lh), the FLOPs of one
/// iteration with full recompute, for a GPT with f = 4h and MHA.
double megatronSc21FlopsPerStep(const Model& m, double globalBatch, double seqLen);

} // namespace madmax
