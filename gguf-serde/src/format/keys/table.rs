//! The standard keys: gguf-py 0.19.0's `gguf.constants.Keys`, one entry each, in gguf-py's order.
//!
//! Each entry is `CONST = "key template", "gguf-py name", (type), reference, "where the type is from"`.
//! The test `standard_keys` (gguf-tests, `tests/interop/standard_keys.rs`) runs gguf-py and checks
//! this table against it: the same key set with the same placeholders, each gguf-py name, and every
//! type that gguf-py's `GGUFWriter` writes. Types: `u32` a scalar, `[string]` an array of that
//! element type, `layer u32` a scalar or one value per layer (llama.cpp's `get_key_or_arr`).

use super::{KeySpec, KeyType, TypeReference};
use crate::format::ValueType;

standard_keys! {
    /// What the file holds: `model`, `adapter`, `imatrix`, ….
    GENERAL_TYPE = "general.type", "General.TYPE", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_type`";
    /// The model architecture (`llama`, `gemma3`, …), which `{arch}` in key names stands for.
    GENERAL_ARCHITECTURE = "general.architecture", "General.ARCHITECTURE", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_architecture`";
    /// Version of the quantization formats (2 today); required when any tensor is quantized.
    GENERAL_QUANTIZATION_VERSION = "general.quantization_version", "General.QUANTIZATION_VERSION", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_quantization_version`";
    /// Alignment of tensor data in bytes: a non-zero power of two, 32 when absent.
    GENERAL_ALIGNMENT = "general.alignment", "General.ALIGNMENT", (u32), LlamaCpp, "ggml `gguf.cpp` requires UINT32";
    /// The dominant tensor type, as llama.cpp's `llama_ftype` numbers it (15 = Q4_K_M, …).
    GENERAL_FILE_TYPE = "general.file_type", "General.FILE_TYPE", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_file_type`";
    /// gguf-py `Keys.General.SAMPLING_SEQUENCE`.
    GENERAL_SAMPLING_SEQUENCE = "general.sampling.sequence", "General.SAMPLING_SEQUENCE", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_sampling_sequence`";
    /// gguf-py `Keys.General.SAMPLING_TOP_K`.
    GENERAL_SAMPLING_TOP_K = "general.sampling.top_k", "General.SAMPLING_TOP_K", (i32), GgufPyWriter, "gguf-py `GGUFWriter.add_sampling_top_k`";
    /// gguf-py `Keys.General.SAMPLING_TOP_P`.
    GENERAL_SAMPLING_TOP_P = "general.sampling.top_p", "General.SAMPLING_TOP_P", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_sampling_top_p`";
    /// gguf-py `Keys.General.SAMPLING_MIN_P`.
    GENERAL_SAMPLING_MIN_P = "general.sampling.min_p", "General.SAMPLING_MIN_P", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_sampling_min_p`";
    /// gguf-py `Keys.General.SAMPLING_XTC_PROBABILITY`.
    GENERAL_SAMPLING_XTC_PROBABILITY = "general.sampling.xtc_probability", "General.SAMPLING_XTC_PROBABILITY", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_sampling_xtc_probability`";
    /// gguf-py `Keys.General.SAMPLING_XTC_THRESHOLD`.
    GENERAL_SAMPLING_XTC_THRESHOLD = "general.sampling.xtc_threshold", "General.SAMPLING_XTC_THRESHOLD", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_sampling_xtc_threshold`";
    /// gguf-py `Keys.General.SAMPLING_TEMP`.
    GENERAL_SAMPLING_TEMP = "general.sampling.temp", "General.SAMPLING_TEMP", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_sampling_temp`";
    /// gguf-py `Keys.General.SAMPLING_PENALTY_LAST_N`.
    GENERAL_SAMPLING_PENALTY_LAST_N = "general.sampling.penalty_last_n", "General.SAMPLING_PENALTY_LAST_N", (i32), GgufPyWriter, "gguf-py `GGUFWriter.add_sampling_penalty_last_n`";
    /// gguf-py `Keys.General.SAMPLING_PENALTY_REPEAT`.
    GENERAL_SAMPLING_PENALTY_REPEAT = "general.sampling.penalty_repeat", "General.SAMPLING_PENALTY_REPEAT", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_sampling_penalty_repeat`";
    /// gguf-py `Keys.General.SAMPLING_MIROSTAT`.
    GENERAL_SAMPLING_MIROSTAT = "general.sampling.mirostat", "General.SAMPLING_MIROSTAT", (i32), GgufPyWriter, "gguf-py `GGUFWriter.add_sampling_mirostat`";
    /// gguf-py `Keys.General.SAMPLING_MIROSTAT_TAU`.
    GENERAL_SAMPLING_MIROSTAT_TAU = "general.sampling.mirostat_tau", "General.SAMPLING_MIROSTAT_TAU", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_sampling_mirostat_tau`";
    /// gguf-py `Keys.General.SAMPLING_MIROSTAT_ETA`.
    GENERAL_SAMPLING_MIROSTAT_ETA = "general.sampling.mirostat_eta", "General.SAMPLING_MIROSTAT_ETA", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_sampling_mirostat_eta`";
    /// Human-readable name of the model.
    GENERAL_NAME = "general.name", "General.NAME", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_name`";
    /// Author of the model.
    GENERAL_AUTHOR = "general.author", "General.AUTHOR", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_author`";
    /// Version of the model.
    GENERAL_VERSION = "general.version", "General.VERSION", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_version`";
    /// Organization that published the model.
    GENERAL_ORGANIZATION = "general.organization", "General.ORGANIZATION", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_organization`";
    /// What the model was fine-tuned for (`Instruct`, …).
    GENERAL_FINETUNE = "general.finetune", "General.FINETUNE", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_finetune`";
    /// Base name of the model family (`gemma-3`, …).
    GENERAL_BASENAME = "general.basename", "General.BASENAME", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_basename`";
    /// Free-form description of the model.
    GENERAL_DESCRIPTION = "general.description", "General.DESCRIPTION", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_description`";
    /// Who quantized the file.
    GENERAL_QUANTIZED_BY = "general.quantized_by", "General.QUANTIZED_BY", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_quantized_by`";
    /// Size class, as parameter count and experts (`270M`, `8x7B`).
    GENERAL_SIZE_LABEL = "general.size_label", "General.SIZE_LABEL", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_size_label`";
    /// License identifier (SPDX expression or name).
    GENERAL_LICENSE = "general.license", "General.LICENSE", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_license`";
    /// Human-readable license name.
    GENERAL_LICENSE_NAME = "general.license.name", "General.LICENSE_NAME", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_license_name`";
    /// URL of the license.
    GENERAL_LICENSE_LINK = "general.license.link", "General.LICENSE_LINK", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_license_link`";
    /// URL of the model's home page.
    GENERAL_URL = "general.url", "General.URL", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_url`";
    /// DOI of the model.
    GENERAL_DOI = "general.doi", "General.DOI", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_doi`";
    /// UUID of the model.
    GENERAL_UUID = "general.uuid", "General.UUID", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_uuid`";
    /// URL of the model's repository.
    GENERAL_REPO_URL = "general.repo_url", "General.REPO_URL", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_repo_url`";
    /// URL of the source the model was converted from.
    GENERAL_SOURCE_URL = "general.source.url", "General.SOURCE_URL", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_source_url`";
    /// DOI of the source model.
    GENERAL_SOURCE_DOI = "general.source.doi", "General.SOURCE_DOI", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_source_doi`";
    /// UUID of the source model.
    GENERAL_SOURCE_UUID = "general.source.uuid", "General.SOURCE_UUID", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_source_uuid`";
    /// Repository URL of the source model.
    GENERAL_SOURCE_REPO_URL = "general.source.repo_url", "General.SOURCE_REPO_URL", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_source_repo_url`";
    /// Number of base models (`general.base_model.{id}.*` for id 0..count).
    GENERAL_BASE_MODEL_COUNT = "general.base_model.count", "General.BASE_MODEL_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_base_model_count`";
    /// gguf-py `Keys.General.BASE_MODEL_NAME`.
    GENERAL_BASE_MODEL_NAME = "general.base_model.{id}.name", "General.BASE_MODEL_NAME", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_base_model_name`";
    /// gguf-py `Keys.General.BASE_MODEL_AUTHOR`.
    GENERAL_BASE_MODEL_AUTHOR = "general.base_model.{id}.author", "General.BASE_MODEL_AUTHOR", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_base_model_author`";
    /// gguf-py `Keys.General.BASE_MODEL_VERSION`.
    GENERAL_BASE_MODEL_VERSION = "general.base_model.{id}.version", "General.BASE_MODEL_VERSION", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_base_model_version`";
    /// gguf-py `Keys.General.BASE_MODEL_ORGANIZATION`.
    GENERAL_BASE_MODEL_ORGANIZATION = "general.base_model.{id}.organization", "General.BASE_MODEL_ORGANIZATION", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_base_model_organization`";
    /// gguf-py `Keys.General.BASE_MODEL_DESCRIPTION`.
    GENERAL_BASE_MODEL_DESCRIPTION = "general.base_model.{id}.description", "General.BASE_MODEL_DESCRIPTION", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_base_model_description`";
    /// gguf-py `Keys.General.BASE_MODEL_URL`.
    GENERAL_BASE_MODEL_URL = "general.base_model.{id}.url", "General.BASE_MODEL_URL", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_base_model_url`";
    /// gguf-py `Keys.General.BASE_MODEL_DOI`.
    GENERAL_BASE_MODEL_DOI = "general.base_model.{id}.doi", "General.BASE_MODEL_DOI", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_base_model_doi`";
    /// gguf-py `Keys.General.BASE_MODEL_UUID`.
    GENERAL_BASE_MODEL_UUID = "general.base_model.{id}.uuid", "General.BASE_MODEL_UUID", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_base_model_uuid`";
    /// gguf-py `Keys.General.BASE_MODEL_REPO_URL`.
    GENERAL_BASE_MODEL_REPO_URL = "general.base_model.{id}.repo_url", "General.BASE_MODEL_REPO_URL", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_base_model_repo_url`";
    /// Number of training datasets (`general.dataset.{id}.*` for id 0..count).
    GENERAL_DATASET_COUNT = "general.dataset.count", "General.DATASET_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_dataset_count`";
    /// gguf-py `Keys.General.DATASET_NAME`.
    GENERAL_DATASET_NAME = "general.dataset.{id}.name", "General.DATASET_NAME", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_dataset_name`";
    /// gguf-py `Keys.General.DATASET_AUTHOR`.
    GENERAL_DATASET_AUTHOR = "general.dataset.{id}.author", "General.DATASET_AUTHOR", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_dataset_author`";
    /// gguf-py `Keys.General.DATASET_VERSION`.
    GENERAL_DATASET_VERSION = "general.dataset.{id}.version", "General.DATASET_VERSION", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_dataset_version`";
    /// gguf-py `Keys.General.DATASET_ORGANIZATION`.
    GENERAL_DATASET_ORGANIZATION = "general.dataset.{id}.organization", "General.DATASET_ORGANIZATION", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_dataset_organization`";
    /// gguf-py `Keys.General.DATASET_DESCRIPTION`.
    GENERAL_DATASET_DESCRIPTION = "general.dataset.{id}.description", "General.DATASET_DESCRIPTION", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_dataset_description`";
    /// gguf-py `Keys.General.DATASET_URL`.
    GENERAL_DATASET_URL = "general.dataset.{id}.url", "General.DATASET_URL", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_dataset_url`";
    /// gguf-py `Keys.General.DATASET_DOI`.
    GENERAL_DATASET_DOI = "general.dataset.{id}.doi", "General.DATASET_DOI", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_dataset_doi`";
    /// gguf-py `Keys.General.DATASET_UUID`.
    GENERAL_DATASET_UUID = "general.dataset.{id}.uuid", "General.DATASET_UUID", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_dataset_uuid`";
    /// gguf-py `Keys.General.DATASET_REPO_URL`.
    GENERAL_DATASET_REPO_URL = "general.dataset.{id}.repo_url", "General.DATASET_REPO_URL", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_dataset_repo_url`";
    /// Tags (for a model hub).
    GENERAL_TAGS = "general.tags", "General.TAGS", ([string]), GgufPyWriter, "gguf-py `GGUFWriter.add_tags`";
    /// Languages the model covers (ISO 639 codes).
    GENERAL_LANGUAGES = "general.languages", "General.LANGUAGES", ([string]), GgufPyWriter, "gguf-py `GGUFWriter.add_languages`";
    /// Vocabulary size.
    LLM_VOCAB_SIZE = "{arch}.vocab_size", "LLM.VOCAB_SIZE", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vocab_size`";
    /// Context length the model was trained with, in tokens.
    LLM_CONTEXT_LENGTH = "{arch}.context_length", "LLM.CONTEXT_LENGTH", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_context_length`";
    /// Embedding width (`n_embd`).
    LLM_EMBEDDING_LENGTH = "{arch}.embedding_length", "LLM.EMBEDDING_LENGTH", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_embedding_length`";
    /// gguf-py `Keys.LLM.EMBEDDING_LENGTH_OUT`.
    LLM_EMBEDDING_LENGTH_OUT = "{arch}.embedding_length_out", "LLM.EMBEDDING_LENGTH_OUT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_embedding_length_out`";
    /// gguf-py `Keys.LLM.FEATURES_LENGTH`.
    LLM_FEATURES_LENGTH = "{arch}.features_length", "LLM.FEATURES_LENGTH", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_features_length`";
    /// Number of transformer blocks (`n_layer`).
    LLM_BLOCK_COUNT = "{arch}.block_count", "LLM.BLOCK_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_block_count`";
    /// gguf-py `Keys.LLM.LEADING_DENSE_BLOCK_COUNT`.
    LLM_LEADING_DENSE_BLOCK_COUNT = "{arch}.leading_dense_block_count", "LLM.LEADING_DENSE_BLOCK_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_leading_dense_block_count`";
    /// Width of the feed-forward layer (`n_ff`).
    LLM_FEED_FORWARD_LENGTH = "{arch}.feed_forward_length", "LLM.FEED_FORWARD_LENGTH", (layer u32), GgufPyWriter, "gguf-py `GGUFWriter.add_feed_forward_length`; llama.cpp reads a scalar or one value per layer";
    /// gguf-py `Keys.LLM.EXPERT_FEED_FORWARD_LENGTH`.
    LLM_EXPERT_FEED_FORWARD_LENGTH = "{arch}.expert_feed_forward_length", "LLM.EXPERT_FEED_FORWARD_LENGTH", (layer u32), GgufPyWriter, "gguf-py `GGUFWriter.add_expert_feed_forward_length`; llama.cpp reads a scalar or one value per layer";
    /// gguf-py `Keys.LLM.EXPERT_SHARED_FEED_FORWARD_LENGTH`.
    LLM_EXPERT_SHARED_FEED_FORWARD_LENGTH = "{arch}.expert_shared_feed_forward_length", "LLM.EXPERT_SHARED_FEED_FORWARD_LENGTH", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_expert_shared_feed_forward_length`";
    /// gguf-py `Keys.LLM.EXPERT_CHUNK_FEED_FORWARD_LENGTH`.
    LLM_EXPERT_CHUNK_FEED_FORWARD_LENGTH = "{arch}.expert_chunk_feed_forward_length", "LLM.EXPERT_CHUNK_FEED_FORWARD_LENGTH", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_expert_chunk_feed_forward_length`";
    /// gguf-py `Keys.LLM.USE_PARALLEL_RESIDUAL`.
    LLM_USE_PARALLEL_RESIDUAL = "{arch}.use_parallel_residual", "LLM.USE_PARALLEL_RESIDUAL", (bool), GgufPyWriter, "gguf-py `GGUFWriter.add_parallel_residual`";
    /// gguf-py `Keys.LLM.TENSOR_DATA_LAYOUT`.
    LLM_TENSOR_DATA_LAYOUT = "{arch}.tensor_data_layout", "LLM.TENSOR_DATA_LAYOUT", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_tensor_data_layout`";
    /// Number of experts of a mixture-of-experts model.
    LLM_EXPERT_COUNT = "{arch}.expert_count", "LLM.EXPERT_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_expert_count`";
    /// Number of experts used per token.
    LLM_EXPERT_USED_COUNT = "{arch}.expert_used_count", "LLM.EXPERT_USED_COUNT", (layer u32), GgufPyWriter, "gguf-py `GGUFWriter.add_expert_used_count`; llama.cpp reads a scalar or one value per layer";
    /// gguf-py `Keys.LLM.EXPERT_SHARED_COUNT`.
    LLM_EXPERT_SHARED_COUNT = "{arch}.expert_shared_count", "LLM.EXPERT_SHARED_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_expert_shared_count`";
    /// gguf-py `Keys.LLM.EXPERT_GROUP_COUNT`.
    LLM_EXPERT_GROUP_COUNT = "{arch}.expert_group_count", "LLM.EXPERT_GROUP_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_expert_group_count`";
    /// gguf-py `Keys.LLM.EXPERT_GROUP_USED_COUNT`.
    LLM_EXPERT_GROUP_USED_COUNT = "{arch}.expert_group_used_count", "LLM.EXPERT_GROUP_USED_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_expert_group_used_count`";
    /// gguf-py `Keys.LLM.EXPERT_WEIGHTS_SCALE`.
    LLM_EXPERT_WEIGHTS_SCALE = "{arch}.expert_weights_scale", "LLM.EXPERT_WEIGHTS_SCALE", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_expert_weights_scale`";
    /// gguf-py `Keys.LLM.EXPERT_WEIGHTS_NORM`.
    LLM_EXPERT_WEIGHTS_NORM = "{arch}.expert_weights_norm", "LLM.EXPERT_WEIGHTS_NORM", (bool), GgufPyWriter, "gguf-py `GGUFWriter.add_expert_weights_norm`";
    /// gguf-py `Keys.LLM.EXPERT_GATING_FUNC`.
    LLM_EXPERT_GATING_FUNC = "{arch}.expert_gating_func", "LLM.EXPERT_GATING_FUNC", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_expert_gating_func`";
    /// gguf-py `Keys.LLM.EXPERT_GROUP_SCALE`.
    LLM_EXPERT_GROUP_SCALE = "{arch}.expert_group_scale", "LLM.EXPERT_GROUP_SCALE", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_expert_group_scale`";
    /// gguf-py `Keys.LLM.EXPERTS_PER_GROUP`.
    LLM_EXPERTS_PER_GROUP = "{arch}.experts_per_group", "LLM.EXPERTS_PER_GROUP", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_experts_per_group`";
    /// gguf-py `Keys.LLM.MOE_EVERY_N_LAYERS`.
    LLM_MOE_EVERY_N_LAYERS = "{arch}.moe_every_n_layers", "LLM.MOE_EVERY_N_LAYERS", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_moe_every_n_layers`";
    /// gguf-py `Keys.LLM.MOE_LATENT_SIZE`.
    LLM_MOE_LATENT_SIZE = "{arch}.moe_latent_size", "LLM.MOE_LATENT_SIZE", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_moe_latent_size`";
    /// gguf-py `Keys.LLM.NEXTN_PREDICT_LAYERS`.
    LLM_NEXTN_PREDICT_LAYERS = "{arch}.nextn_predict_layers", "LLM.NEXTN_PREDICT_LAYERS", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_nextn_predict_layers`";
    /// gguf-py `Keys.LLM.NUM_DEEPSTACK_LAYERS`.
    LLM_NUM_DEEPSTACK_LAYERS = "{arch}.n_deepstack_layers", "LLM.NUM_DEEPSTACK_LAYERS", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_num_deepstack_layers`";
    /// Pooling of an embedding model (llama.cpp `llama_pooling_type`).
    LLM_POOLING_TYPE = "{arch}.pooling_type", "LLM.POOLING_TYPE", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_pooling_type`";
    /// gguf-py `Keys.LLM.LOGIT_SCALE`.
    LLM_LOGIT_SCALE = "{arch}.logit_scale", "LLM.LOGIT_SCALE", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_logit_scale`";
    /// gguf-py `Keys.LLM.DECODER_START_TOKEN_ID`.
    LLM_DECODER_START_TOKEN_ID = "{arch}.decoder_start_token_id", "LLM.DECODER_START_TOKEN_ID", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_decoder_start_token_id`";
    /// gguf-py `Keys.LLM.DECODER_BLOCK_COUNT`.
    LLM_DECODER_BLOCK_COUNT = "{arch}.decoder_block_count", "LLM.DECODER_BLOCK_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_decoder_block_count`";
    /// gguf-py `Keys.LLM.ATTN_LOGIT_SOFTCAPPING`.
    LLM_ATTN_LOGIT_SOFTCAPPING = "{arch}.attn_logit_softcapping", "LLM.ATTN_LOGIT_SOFTCAPPING", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_attn_logit_softcapping`";
    /// gguf-py `Keys.LLM.ROUTER_LOGIT_SOFTCAPPING`.
    LLM_ROUTER_LOGIT_SOFTCAPPING = "{arch}.router_logit_softcapping", "LLM.ROUTER_LOGIT_SOFTCAPPING", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_router_logit_softcapping`";
    /// gguf-py `Keys.LLM.FINAL_LOGIT_SOFTCAPPING`.
    LLM_FINAL_LOGIT_SOFTCAPPING = "{arch}.final_logit_softcapping", "LLM.FINAL_LOGIT_SOFTCAPPING", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_final_logit_softcapping`";
    /// gguf-py `Keys.LLM.SWIN_NORM`.
    LLM_SWIN_NORM = "{arch}.swin_norm", "LLM.SWIN_NORM", (bool), GgufPyWriter, "gguf-py `GGUFWriter.add_swin_norm`";
    /// gguf-py `Keys.LLM.RESCALE_EVERY_N_LAYERS`.
    LLM_RESCALE_EVERY_N_LAYERS = "{arch}.rescale_every_n_layers", "LLM.RESCALE_EVERY_N_LAYERS", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_rescale_every_n_layers`";
    /// gguf-py `Keys.LLM.TIME_MIX_EXTRA_DIM`.
    LLM_TIME_MIX_EXTRA_DIM = "{arch}.time_mix_extra_dim", "LLM.TIME_MIX_EXTRA_DIM", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_time_mix_extra_dim`";
    /// gguf-py `Keys.LLM.TIME_DECAY_EXTRA_DIM`.
    LLM_TIME_DECAY_EXTRA_DIM = "{arch}.time_decay_extra_dim", "LLM.TIME_DECAY_EXTRA_DIM", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_time_decay_extra_dim`";
    /// gguf-py `Keys.LLM.RESIDUAL_SCALE`.
    LLM_RESIDUAL_SCALE = "{arch}.residual_scale", "LLM.RESIDUAL_SCALE", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_residual_scale`";
    /// gguf-py `Keys.LLM.EMBEDDING_SCALE`.
    LLM_EMBEDDING_SCALE = "{arch}.embedding_scale", "LLM.EMBEDDING_SCALE", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_embedding_scale`";
    /// gguf-py `Keys.LLM.TOKEN_SHIFT_COUNT`.
    LLM_TOKEN_SHIFT_COUNT = "{arch}.token_shift_count", "LLM.TOKEN_SHIFT_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_token_shift_count`";
    /// gguf-py `Keys.LLM.INTERLEAVE_MOE_LAYER_STEP`.
    LLM_INTERLEAVE_MOE_LAYER_STEP = "{arch}.interleave_moe_layer_step", "LLM.INTERLEAVE_MOE_LAYER_STEP", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_interleave_moe_layer_step`";
    /// gguf-py `Keys.LLM.FULL_ATTENTION_INTERVAL`.
    LLM_FULL_ATTENTION_INTERVAL = "{arch}.full_attention_interval", "LLM.FULL_ATTENTION_INTERVAL", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_full_attention_interval`";
    /// gguf-py `Keys.LLM.ACTIVATION_SPARSITY_SCALE`.
    LLM_ACTIVATION_SPARSITY_SCALE = "{arch}.activation_sparsity_scale", "LLM.ACTIVATION_SPARSITY_SCALE", ([f32]), GgufPyWriter, "gguf-py `GGUFWriter.add_activation_sparsity_scale`";
    /// gguf-py `Keys.LLM.ALTUP_ACTIVE_IDX`.
    LLM_ALTUP_ACTIVE_IDX = "{arch}.altup.active_idx", "LLM.ALTUP_ACTIVE_IDX", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_altup_active_idx`";
    /// gguf-py `Keys.LLM.ALTUP_NUM_INPUTS`.
    LLM_ALTUP_NUM_INPUTS = "{arch}.altup.num_inputs", "LLM.ALTUP_NUM_INPUTS", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_altup_num_inputs`";
    /// gguf-py `Keys.LLM.EMBD_LENGTH_PER_LAYER_INP`.
    LLM_EMBD_LENGTH_PER_LAYER_INP = "{arch}.embedding_length_per_layer_input", "LLM.EMBD_LENGTH_PER_LAYER_INP", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_embedding_length_per_layer_input`";
    /// gguf-py `Keys.LLM.SWIGLU_CLAMP_EXP`.
    LLM_SWIGLU_CLAMP_EXP = "{arch}.swiglu_clamp_exp", "LLM.SWIGLU_CLAMP_EXP", (layer f32), GgufPyWriter, "gguf-py `GGUFWriter.add_swiglu_clamp_exp`; llama.cpp reads a scalar or one value per layer";
    /// gguf-py `Keys.LLM.SWIGLU_CLAMP_SHEXP`.
    LLM_SWIGLU_CLAMP_SHEXP = "{arch}.swiglu_clamp_shexp", "LLM.SWIGLU_CLAMP_SHEXP", (layer f32), GgufPyWriter, "gguf-py `GGUFWriter.add_swiglu_clamp_shexp`; llama.cpp reads a scalar or one value per layer";
    /// gguf-py `Keys.LLM.DENSE_FEAT_IN_SIZE`.
    LLM_DENSE_FEAT_IN_SIZE = "{arch}.{dense}_feat_in", "LLM.DENSE_FEAT_IN_SIZE", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_dense_features_dims`";
    /// gguf-py `Keys.LLM.DENSE_FEAT_OUT_SIZE`.
    LLM_DENSE_FEAT_OUT_SIZE = "{arch}.{dense}_feat_out", "LLM.DENSE_FEAT_OUT_SIZE", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_dense_features_dims`";
    /// Number of attention heads.
    ATTENTION_HEAD_COUNT = "{arch}.attention.head_count", "Attention.HEAD_COUNT", (layer u32), GgufPyWriter, "gguf-py `GGUFWriter.add_head_count`; llama.cpp reads a scalar or one value per layer";
    /// Number of key/value heads (grouped-query attention).
    ATTENTION_HEAD_COUNT_KV = "{arch}.attention.head_count_kv", "Attention.HEAD_COUNT_KV", (layer u32), GgufPyWriter, "gguf-py `GGUFWriter.add_head_count_kv`; llama.cpp reads a scalar or one value per layer";
    /// gguf-py `Keys.Attention.MAX_ALIBI_BIAS`.
    ATTENTION_MAX_ALIBI_BIAS = "{arch}.attention.max_alibi_bias", "Attention.MAX_ALIBI_BIAS", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_max_alibi_bias`";
    /// gguf-py `Keys.Attention.CLAMP_KQV`.
    ATTENTION_CLAMP_KQV = "{arch}.attention.clamp_kqv", "Attention.CLAMP_KQV", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_clamp_kqv`";
    /// Width of one key head.
    ATTENTION_KEY_LENGTH = "{arch}.attention.key_length", "Attention.KEY_LENGTH", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_key_length`";
    /// Width of one value head.
    ATTENTION_VALUE_LENGTH = "{arch}.attention.value_length", "Attention.VALUE_LENGTH", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_value_length`";
    /// Epsilon of LayerNorm.
    ATTENTION_LAYERNORM_EPS = "{arch}.attention.layer_norm_epsilon", "Attention.LAYERNORM_EPS", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_layer_norm_eps`";
    /// Epsilon of RMSNorm.
    ATTENTION_LAYERNORM_RMS_EPS = "{arch}.attention.layer_norm_rms_epsilon", "Attention.LAYERNORM_RMS_EPS", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_layer_norm_rms_eps`";
    /// gguf-py `Keys.Attention.GROUPNORM_EPS`.
    ATTENTION_GROUPNORM_EPS = "{arch}.attention.group_norm_epsilon", "Attention.GROUPNORM_EPS", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_group_norm_eps`";
    /// gguf-py `Keys.Attention.GROUPNORM_GROUPS`.
    ATTENTION_GROUPNORM_GROUPS = "{arch}.attention.group_norm_groups", "Attention.GROUPNORM_GROUPS", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_group_norm_groups`";
    /// Whether attention is causal.
    ATTENTION_CAUSAL = "{arch}.attention.causal", "Attention.CAUSAL", (bool), GgufPyWriter, "gguf-py `GGUFWriter.add_causal_attention`";
    /// gguf-py `Keys.Attention.Q_LORA_RANK`.
    ATTENTION_Q_LORA_RANK = "{arch}.attention.q_lora_rank", "Attention.Q_LORA_RANK", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_q_lora_rank`";
    /// gguf-py `Keys.Attention.KV_LORA_RANK`.
    ATTENTION_KV_LORA_RANK = "{arch}.attention.kv_lora_rank", "Attention.KV_LORA_RANK", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_kv_lora_rank`";
    /// gguf-py `Keys.Attention.DECAY_LORA_RANK`.
    ATTENTION_DECAY_LORA_RANK = "{arch}.attention.decay_lora_rank", "Attention.DECAY_LORA_RANK", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_decay_lora_rank`";
    /// gguf-py `Keys.Attention.ICLR_LORA_RANK`.
    ATTENTION_ICLR_LORA_RANK = "{arch}.attention.iclr_lora_rank", "Attention.ICLR_LORA_RANK", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_iclr_lora_rank`";
    /// gguf-py `Keys.Attention.VALUE_RESIDUAL_MIX_LORA_RANK`.
    ATTENTION_VALUE_RESIDUAL_MIX_LORA_RANK = "{arch}.attention.value_residual_mix_lora_rank", "Attention.VALUE_RESIDUAL_MIX_LORA_RANK", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_value_residual_mix_lora_rank`";
    /// gguf-py `Keys.Attention.GATE_LORA_RANK`.
    ATTENTION_GATE_LORA_RANK = "{arch}.attention.gate_lora_rank", "Attention.GATE_LORA_RANK", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_gate_lora_rank`";
    /// gguf-py `Keys.Attention.REL_BUCKETS_COUNT`.
    ATTENTION_REL_BUCKETS_COUNT = "{arch}.attention.relative_buckets_count", "Attention.REL_BUCKETS_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_relative_attn_buckets_count`";
    /// Size of the sliding attention window, in tokens.
    ATTENTION_SLIDING_WINDOW = "{arch}.attention.sliding_window", "Attention.SLIDING_WINDOW", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_sliding_window`";
    /// gguf-py `Keys.Attention.SCALE`.
    ATTENTION_SCALE = "{arch}.attention.scale", "Attention.SCALE", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_attention_scale`";
    /// gguf-py `Keys.Attention.OUTPUT_SCALE`.
    ATTENTION_OUTPUT_SCALE = "{arch}.attention.output_scale", "Attention.OUTPUT_SCALE", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_attn_output_scale`";
    /// gguf-py `Keys.Attention.TEMPERATURE_LENGTH`.
    ATTENTION_TEMPERATURE_LENGTH = "{arch}.attention.temperature_length", "Attention.TEMPERATURE_LENGTH", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_attn_temperature_length`";
    /// gguf-py `Keys.Attention.KEY_LENGTH_MLA`.
    ATTENTION_KEY_LENGTH_MLA = "{arch}.attention.key_length_mla", "Attention.KEY_LENGTH_MLA", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_key_length_mla`";
    /// gguf-py `Keys.Attention.VALUE_LENGTH_MLA`.
    ATTENTION_VALUE_LENGTH_MLA = "{arch}.attention.value_length_mla", "Attention.VALUE_LENGTH_MLA", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_value_length_mla`";
    /// gguf-py `Keys.Attention.KEY_LENGTH_SWA`.
    ATTENTION_KEY_LENGTH_SWA = "{arch}.attention.key_length_swa", "Attention.KEY_LENGTH_SWA", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_key_length_swa`";
    /// gguf-py `Keys.Attention.VALUE_LENGTH_SWA`.
    ATTENTION_VALUE_LENGTH_SWA = "{arch}.attention.value_length_swa", "Attention.VALUE_LENGTH_SWA", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_value_length_swa`";
    /// gguf-py `Keys.Attention.SHARED_KV_LAYERS`.
    ATTENTION_SHARED_KV_LAYERS = "{arch}.attention.shared_kv_layers", "Attention.SHARED_KV_LAYERS", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_shared_kv_layers`";
    /// Which layers use sliding-window attention: a period, or one bool per layer.
    ATTENTION_SLIDING_WINDOW_PATTERN = "{arch}.attention.sliding_window_pattern", "Attention.SLIDING_WINDOW_PATTERN", (layer u32), GgufPyWriter, "gguf-py `GGUFWriter.add_sliding_window_pattern`; llama.cpp reads a scalar or one value per layer";
    /// gguf-py `Keys.Attention.TEMPERATURE_SCALE`.
    ATTENTION_TEMPERATURE_SCALE = "{arch}.attention.temperature_scale", "Attention.TEMPERATURE_SCALE", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_attn_temperature_scale`";
    /// gguf-py `Keys.Attention.Indexer.HEAD_COUNT`.
    ATTENTION_INDEXER_HEAD_COUNT = "{arch}.attention.indexer.head_count", "Attention.Indexer.HEAD_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_indexer_head_count`";
    /// gguf-py `Keys.Attention.Indexer.KEY_LENGTH`.
    ATTENTION_INDEXER_KEY_LENGTH = "{arch}.attention.indexer.key_length", "Attention.Indexer.KEY_LENGTH", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_indexer_key_length`";
    /// gguf-py `Keys.Attention.Indexer.TOP_K`.
    ATTENTION_INDEXER_TOP_K = "{arch}.attention.indexer.top_k", "Attention.Indexer.TOP_K", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_indexer_top_k`";
    /// Number of dimensions RoPE rotates.
    ROPE_DIMENSION_COUNT = "{arch}.rope.dimension_count", "Rope.DIMENSION_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_rope_dimension_count`";
    /// gguf-py `Keys.Rope.DIMENSION_COUNT_SWA`.
    ROPE_DIMENSION_COUNT_SWA = "{arch}.rope.dimension_count_swa", "Rope.DIMENSION_COUNT_SWA", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_rope_dimension_count_swa`";
    /// gguf-py `Keys.Rope.DIMENSION_SECTIONS`.
    ROPE_DIMENSION_SECTIONS = "{arch}.rope.dimension_sections", "Rope.DIMENSION_SECTIONS", ([i32]), GgufPyWriter, "gguf-py `GGUFWriter.add_rope_dimension_sections`";
    /// RoPE base frequency (theta).
    ROPE_FREQ_BASE = "{arch}.rope.freq_base", "Rope.FREQ_BASE", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_rope_freq_base`";
    /// RoPE base frequency of the sliding-window layers.
    ROPE_FREQ_BASE_SWA = "{arch}.rope.freq_base_swa", "Rope.FREQ_BASE_SWA", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_rope_freq_base_swa`";
    /// RoPE scaling: `none`, `linear`, `yarn`, `longrope`.
    ROPE_SCALING_TYPE = "{arch}.rope.scaling.type", "Rope.SCALING_TYPE", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_rope_scaling_type`";
    /// RoPE scaling factor.
    ROPE_SCALING_FACTOR = "{arch}.rope.scaling.factor", "Rope.SCALING_FACTOR", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_rope_scaling_factor`";
    /// gguf-py `Keys.Rope.SCALING_ALPHA`.
    ROPE_SCALING_ALPHA = "{arch}.rope.scaling.alpha", "Rope.SCALING_ALPHA", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_rope_scaling_alpha`";
    /// gguf-py `Keys.Rope.SCALING_ATTN_FACTOR`.
    ROPE_SCALING_ATTN_FACTOR = "{arch}.rope.scaling.attn_factor", "Rope.SCALING_ATTN_FACTOR", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_rope_scaling_attn_factors`";
    /// Context length before RoPE scaling, in tokens.
    ROPE_SCALING_ORIG_CTX_LEN = "{arch}.rope.scaling.original_context_length", "Rope.SCALING_ORIG_CTX_LEN", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_rope_scaling_orig_ctx_len`";
    /// gguf-py `Keys.Rope.SCALING_FINETUNED`.
    ROPE_SCALING_FINETUNED = "{arch}.rope.scaling.finetuned", "Rope.SCALING_FINETUNED", (bool), GgufPyWriter, "gguf-py `GGUFWriter.add_rope_scaling_finetuned`";
    /// gguf-py `Keys.Rope.SCALING_YARN_LOG_MUL`.
    ROPE_SCALING_YARN_LOG_MUL = "{arch}.rope.scaling.yarn_log_multiplier", "Rope.SCALING_YARN_LOG_MUL", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_rope_scaling_yarn_log_mul`";
    /// gguf-py `Keys.Rope.SCALING_YARN_EXT_FACTOR`.
    ROPE_SCALING_YARN_EXT_FACTOR = "{arch}.rope.scaling.yarn_ext_factor", "Rope.SCALING_YARN_EXT_FACTOR", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_rope_scaling_yarn_ext_factor`";
    /// gguf-py `Keys.Rope.SCALING_YARN_ATTN_FACTOR`.
    ROPE_SCALING_YARN_ATTN_FACTOR = "{arch}.rope.scaling.yarn_attn_factor", "Rope.SCALING_YARN_ATTN_FACTOR", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_rope_scaling_yarn_attn_factor`";
    /// gguf-py `Keys.Rope.SCALING_YARN_BETA_FAST`.
    ROPE_SCALING_YARN_BETA_FAST = "{arch}.rope.scaling.yarn_beta_fast", "Rope.SCALING_YARN_BETA_FAST", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_rope_scaling_yarn_beta_fast`";
    /// gguf-py `Keys.Rope.SCALING_YARN_BETA_SLOW`.
    ROPE_SCALING_YARN_BETA_SLOW = "{arch}.rope.scaling.yarn_beta_slow", "Rope.SCALING_YARN_BETA_SLOW", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_rope_scaling_yarn_beta_slow`";
    /// 0-based number of this shard.
    SPLIT_NO = "split.no", "Split.LLM_KV_SPLIT_NO", (u16), LlamaCpp, "`src/llama-model-loader.cpp` reads it as UINT16";
    /// Number of shards.
    SPLIT_COUNT = "split.count", "Split.LLM_KV_SPLIT_COUNT", (u16), LlamaCpp, "`src/llama-model-loader.cpp` reads it as UINT16";
    /// Number of tensors in all shards.
    SPLIT_TENSORS_COUNT = "split.tensors.count", "Split.LLM_KV_SPLIT_TENSORS_COUNT", (i32), LlamaCpp, "`tools/gguf-split` writes it as INT32";
    /// gguf-py `Keys.SSM.CONV_KERNEL`.
    SSM_CONV_KERNEL = "{arch}.ssm.conv_kernel", "SSM.CONV_KERNEL", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_ssm_conv_kernel`";
    /// gguf-py `Keys.SSM.INNER_SIZE`.
    SSM_INNER_SIZE = "{arch}.ssm.inner_size", "SSM.INNER_SIZE", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_ssm_inner_size`";
    /// gguf-py `Keys.SSM.STATE_SIZE`.
    SSM_STATE_SIZE = "{arch}.ssm.state_size", "SSM.STATE_SIZE", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_ssm_state_size`";
    /// gguf-py `Keys.SSM.TIME_STEP_RANK`.
    SSM_TIME_STEP_RANK = "{arch}.ssm.time_step_rank", "SSM.TIME_STEP_RANK", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_ssm_time_step_rank`";
    /// gguf-py `Keys.SSM.GROUP_COUNT`.
    SSM_GROUP_COUNT = "{arch}.ssm.group_count", "SSM.GROUP_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_ssm_group_count`";
    /// gguf-py `Keys.SSM.DT_B_C_RMS`.
    SSM_DT_B_C_RMS = "{arch}.ssm.dt_b_c_rms", "SSM.DT_B_C_RMS", (bool), GgufPyWriter, "gguf-py `GGUFWriter.add_ssm_dt_b_c_rms`";
    /// gguf-py `Keys.KDA.HEAD_DIM`.
    KDA_HEAD_DIM = "{arch}.kda.head_dim", "KDA.HEAD_DIM", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_kda_head_dim`";
    /// gguf-py `Keys.WKV.HEAD_SIZE`.
    WKV_HEAD_SIZE = "{arch}.wkv.head_size", "WKV.HEAD_SIZE", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_wkv_head_size`";
    /// gguf-py `Keys.PosNet.EMBEDDING_LENGTH`.
    POSNET_EMBEDDING_LENGTH = "{arch}.posnet.embedding_length", "PosNet.EMBEDDING_LENGTH", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_posnet_embedding_length`";
    /// gguf-py `Keys.PosNet.BLOCK_COUNT`.
    POSNET_BLOCK_COUNT = "{arch}.posnet.block_count", "PosNet.BLOCK_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_posnet_block_count`";
    /// gguf-py `Keys.ConvNext.EMBEDDING_LENGTH`.
    CONVNEXT_EMBEDDING_LENGTH = "{arch}.convnext.embedding_length", "ConvNext.EMBEDDING_LENGTH", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_convnext_embedding_length`";
    /// gguf-py `Keys.ConvNext.BLOCK_COUNT`.
    CONVNEXT_BLOCK_COUNT = "{arch}.convnext.block_count", "ConvNext.BLOCK_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_convnext_block_count`";
    /// gguf-py `Keys.Classifier.OUTPUT_LABELS`.
    CLASSIFIER_OUTPUT_LABELS = "{arch}.classifier.output_labels", "Classifier.OUTPUT_LABELS", ([string]), GgufPyWriter, "gguf-py `GGUFWriter.add_classifier_output_labels`";
    /// gguf-py `Keys.ShortConv.L_CACHE`.
    SHORTCONV_L_CACHE = "{arch}.shortconv.l_cache", "ShortConv.L_CACHE", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_shortconv_l_cache`";
    /// Tokenizer kind: `llama` (SentencePiece), `gpt2` (BPE), `bert`, `t5`, `rwkv`, `plamo2`, or `none`.
    TOKENIZER_MODEL = "tokenizer.ggml.model", "Tokenizer.MODEL", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_tokenizer_model`";
    /// Pre-tokenizer name (`default`, `llama-bpe`, `qwen2`, …).
    TOKENIZER_PRE = "tokenizer.ggml.pre", "Tokenizer.PRE", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_tokenizer_pre`";
    /// The vocabulary, by token id.
    TOKENIZER_LIST = "tokenizer.ggml.tokens", "Tokenizer.LIST", ([string]), GgufPyWriter, "gguf-py `GGUFWriter.add_token_list`";
    /// Type of each token (llama.cpp `llama_token_type`: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte).
    TOKENIZER_TOKEN_TYPE = "tokenizer.ggml.token_type", "Tokenizer.TOKEN_TYPE", ([i32]), GgufPyWriter, "gguf-py `GGUFWriter.add_token_types`";
    /// Number of token types (BERT segment types).
    TOKENIZER_TOKEN_TYPE_COUNT = "tokenizer.ggml.token_type_count", "Tokenizer.TOKEN_TYPE_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_token_type_count`";
    /// Score of each token (SentencePiece log-probabilities).
    TOKENIZER_SCORES = "tokenizer.ggml.scores", "Tokenizer.SCORES", ([f32]), GgufPyWriter, "gguf-py `GGUFWriter.add_token_scores`";
    /// BPE merges, `"a b"` each.
    TOKENIZER_MERGES = "tokenizer.ggml.merges", "Tokenizer.MERGES", ([string]), GgufPyWriter, "gguf-py `GGUFWriter.add_token_merges`";
    /// Beginning-of-sequence token id.
    TOKENIZER_BOS_ID = "tokenizer.ggml.bos_token_id", "Tokenizer.BOS_ID", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_bos_token_id`";
    /// End-of-sequence token id.
    TOKENIZER_EOS_ID = "tokenizer.ggml.eos_token_id", "Tokenizer.EOS_ID", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_eos_token_id`";
    /// End-of-turn token id.
    TOKENIZER_EOT_ID = "tokenizer.ggml.eot_token_id", "Tokenizer.EOT_ID", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_eot_token_id`";
    /// End-of-message token id.
    TOKENIZER_EOM_ID = "tokenizer.ggml.eom_token_id", "Tokenizer.EOM_ID", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_eom_token_id`";
    /// Unknown-token id.
    TOKENIZER_UNK_ID = "tokenizer.ggml.unknown_token_id", "Tokenizer.UNK_ID", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_unk_token_id`";
    /// Separator token id (the key is spelled `seperator`, as the reference spells it).
    TOKENIZER_SEP_ID = "tokenizer.ggml.seperator_token_id", "Tokenizer.SEP_ID", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_sep_token_id`";
    /// Padding token id.
    TOKENIZER_PAD_ID = "tokenizer.ggml.padding_token_id", "Tokenizer.PAD_ID", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_pad_token_id`";
    /// Mask token id.
    TOKENIZER_MASK_ID = "tokenizer.ggml.mask_token_id", "Tokenizer.MASK_ID", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_mask_token_id`";
    /// Whether tokenizing adds the BOS token.
    TOKENIZER_ADD_BOS = "tokenizer.ggml.add_bos_token", "Tokenizer.ADD_BOS", (bool), GgufPyWriter, "gguf-py `GGUFWriter.add_add_bos_token`";
    /// Whether tokenizing adds the EOS token.
    TOKENIZER_ADD_EOS = "tokenizer.ggml.add_eos_token", "Tokenizer.ADD_EOS", (bool), GgufPyWriter, "gguf-py `GGUFWriter.add_add_eos_token`";
    /// Whether tokenizing adds the separator token.
    TOKENIZER_ADD_SEP = "tokenizer.ggml.add_sep_token", "Tokenizer.ADD_SEP", (bool), GgufPyWriter, "gguf-py `GGUFWriter.add_add_sep_token`";
    /// Whether SentencePiece adds a space before the text.
    TOKENIZER_ADD_PREFIX = "tokenizer.ggml.add_space_prefix", "Tokenizer.ADD_PREFIX", (bool), GgufPyWriter, "gguf-py `GGUFWriter.add_add_space_prefix`";
    /// Whether SentencePiece collapses runs of whitespace.
    TOKENIZER_REMOVE_EXTRA_WS = "tokenizer.ggml.remove_extra_whitespaces", "Tokenizer.REMOVE_EXTRA_WS", (bool), GgufPyWriter, "gguf-py `GGUFWriter.add_remove_extra_whitespaces`";
    /// SentencePiece's precompiled normalization map, as bytes.
    TOKENIZER_PRECOMPILED_CHARSMAP = "tokenizer.ggml.precompiled_charsmap", "Tokenizer.PRECOMPILED_CHARSMAP", ([u8]), GgufPyWriter, "gguf-py `GGUFWriter.add_precompiled_charsmap`";
    /// A whole Hugging Face `tokenizer.json`.
    TOKENIZER_HF_JSON = "tokenizer.huggingface.json", "Tokenizer.HF_JSON", (string), Spec, "ggml `docs/gguf.md`";
    /// An RWKV World tokenizer.
    TOKENIZER_RWKV = "tokenizer.rwkv.world", "Tokenizer.RWKV", (string), Spec, "ggml `docs/gguf.md`";
    /// The default chat template (Jinja).
    TOKENIZER_CHAT_TEMPLATE = "tokenizer.chat_template", "Tokenizer.CHAT_TEMPLATE", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_chat_template`";
    /// A named chat template (`tool_use`, `rag`, …).
    TOKENIZER_CHAT_TEMPLATE_N = "tokenizer.chat_template.{name}", "Tokenizer.CHAT_TEMPLATE_N", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_chat_template`";
    /// Names of the named chat templates.
    TOKENIZER_CHAT_TEMPLATES = "tokenizer.chat_templates", "Tokenizer.CHAT_TEMPLATES", ([string]), GgufPyWriter, "gguf-py `GGUFWriter.add_chat_template`";
    /// gguf-py `Keys.Tokenizer.FIM_PRE_ID`.
    TOKENIZER_FIM_PRE_ID = "tokenizer.ggml.fim_pre_token_id", "Tokenizer.FIM_PRE_ID", (u32), LlamaCpp, "`src/llama-vocab.cpp` reads it as UINT32";
    /// gguf-py `Keys.Tokenizer.FIM_SUF_ID`.
    TOKENIZER_FIM_SUF_ID = "tokenizer.ggml.fim_suf_token_id", "Tokenizer.FIM_SUF_ID", (u32), LlamaCpp, "`src/llama-vocab.cpp` reads it as UINT32";
    /// gguf-py `Keys.Tokenizer.FIM_MID_ID`.
    TOKENIZER_FIM_MID_ID = "tokenizer.ggml.fim_mid_token_id", "Tokenizer.FIM_MID_ID", (u32), LlamaCpp, "`src/llama-vocab.cpp` reads it as UINT32";
    /// gguf-py `Keys.Tokenizer.FIM_PAD_ID`.
    TOKENIZER_FIM_PAD_ID = "tokenizer.ggml.fim_pad_token_id", "Tokenizer.FIM_PAD_ID", (u32), LlamaCpp, "`src/llama-vocab.cpp` reads it as UINT32";
    /// gguf-py `Keys.Tokenizer.FIM_REP_ID`.
    TOKENIZER_FIM_REP_ID = "tokenizer.ggml.fim_rep_token_id", "Tokenizer.FIM_REP_ID", (u32), LlamaCpp, "`src/llama-vocab.cpp` reads it as UINT32";
    /// gguf-py `Keys.Tokenizer.FIM_SEP_ID`.
    TOKENIZER_FIM_SEP_ID = "tokenizer.ggml.fim_sep_token_id", "Tokenizer.FIM_SEP_ID", (u32), LlamaCpp, "`src/llama-vocab.cpp` reads it as UINT32";
    /// gguf-py `Keys.Tokenizer.PREFIX_ID`.
    TOKENIZER_PREFIX_ID = "tokenizer.ggml.prefix_token_id", "Tokenizer.PREFIX_ID", (u32), LlamaCpp, "`src/llama-vocab.cpp` reads it as UINT32";
    /// gguf-py `Keys.Tokenizer.SUFFIX_ID`.
    TOKENIZER_SUFFIX_ID = "tokenizer.ggml.suffix_token_id", "Tokenizer.SUFFIX_ID", (u32), LlamaCpp, "`src/llama-vocab.cpp` reads it as UINT32";
    /// gguf-py `Keys.Tokenizer.MIDDLE_ID`.
    TOKENIZER_MIDDLE_ID = "tokenizer.ggml.middle_token_id", "Tokenizer.MIDDLE_ID", (u32), LlamaCpp, "`src/llama-vocab.cpp` reads it as UINT32";
    /// gguf-py `Keys.Adapter.TYPE`.
    ADAPTER_TYPE = "adapter.type", "Adapter.TYPE", (string), LlamaCpp, "`src/llama-adapter.cpp` reads it as a string (must be `lora`)";
    /// gguf-py `Keys.Adapter.LORA_ALPHA`.
    ADAPTER_LORA_ALPHA = "adapter.lora.alpha", "Adapter.LORA_ALPHA", (f32), LlamaCpp, "`src/llama-adapter.cpp` reads it as FLOAT32";
    /// gguf-py `Keys.Adapter.LORA_TASK_NAME`.
    ADAPTER_LORA_TASK_NAME = "adapter.lora.task_name", "Adapter.LORA_TASK_NAME", (string), Converter, "`conversion/bert.py` writes it with `add_string`";
    /// gguf-py `Keys.Adapter.LORA_PROMPT_PREFIX`.
    ADAPTER_LORA_PROMPT_PREFIX = "adapter.lora.prompt_prefix", "Adapter.LORA_PROMPT_PREFIX", (string), Converter, "`conversion/bert.py` writes it with `add_string`";
    /// gguf-py `Keys.Adapter.ALORA_INVOCATION_TOKENS`.
    ADAPTER_ALORA_INVOCATION_TOKENS = "adapter.alora.invocation_tokens", "Adapter.ALORA_INVOCATION_TOKENS", ([u32]), LlamaCpp, "`src/llama-adapter.cpp` requires an array of UINT32";
    /// gguf-py `Keys.IMatrix.CHUNK_COUNT`.
    IMATRIX_CHUNK_COUNT = "imatrix.chunk_count", "IMatrix.CHUNK_COUNT", (u32), LlamaCpp, "`tools/imatrix/imatrix.cpp` writes it with `gguf_set_val_u32`";
    /// gguf-py `Keys.IMatrix.CHUNK_SIZE`.
    IMATRIX_CHUNK_SIZE = "imatrix.chunk_size", "IMatrix.CHUNK_SIZE", (u32), LlamaCpp, "`tools/imatrix/imatrix.cpp` writes it with `gguf_set_val_u32`";
    /// gguf-py `Keys.IMatrix.DATASETS`.
    IMATRIX_DATASETS = "imatrix.datasets", "IMatrix.DATASETS", ([string]), LlamaCpp, "`tools/imatrix/imatrix.cpp` writes it with `gguf_set_arr_str`";
    /// gguf-py `Keys.Clip.PROJECTOR_TYPE`.
    CLIP_PROJECTOR_TYPE = "clip.projector_type", "Clip.PROJECTOR_TYPE", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_clip_projector_type`";
    /// gguf-py `Keys.Clip.HAS_VISION_ENCODER`.
    CLIP_HAS_VISION_ENCODER = "clip.has_vision_encoder", "Clip.HAS_VISION_ENCODER", (bool), GgufPyWriter, "gguf-py `GGUFWriter.add_clip_has_vision_encoder`";
    /// gguf-py `Keys.Clip.HAS_AUDIO_ENCODER`.
    CLIP_HAS_AUDIO_ENCODER = "clip.has_audio_encoder", "Clip.HAS_AUDIO_ENCODER", (bool), GgufPyWriter, "gguf-py `GGUFWriter.add_clip_has_audio_encoder`";
    /// gguf-py `Keys.Clip.HAS_LLAVA_PROJECTOR`.
    CLIP_HAS_LLAVA_PROJECTOR = "clip.has_llava_projector", "Clip.HAS_LLAVA_PROJECTOR", (bool), Converter, "`tools/mtmd/legacy-models/convert_image_encoder_to_gguf.py` writes it with `add_bool`";
    /// gguf-py `Keys.ClipVision.PROJECTOR_TYPE`.
    CLIPVISION_PROJECTOR_TYPE = "clip.vision.projector_type", "ClipVision.PROJECTOR_TYPE", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_clip_vision_projector_type`";
    /// gguf-py `Keys.ClipVision.IMAGE_SIZE`.
    CLIPVISION_IMAGE_SIZE = "clip.vision.image_size", "ClipVision.IMAGE_SIZE", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_image_size`";
    /// gguf-py `Keys.ClipVision.IMAGE_MIN_PIXELS`.
    CLIPVISION_IMAGE_MIN_PIXELS = "clip.vision.image_min_pixels", "ClipVision.IMAGE_MIN_PIXELS", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_min_pixels`";
    /// gguf-py `Keys.ClipVision.IMAGE_MAX_PIXELS`.
    CLIPVISION_IMAGE_MAX_PIXELS = "clip.vision.image_max_pixels", "ClipVision.IMAGE_MAX_PIXELS", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_max_pixels`";
    /// gguf-py `Keys.ClipVision.PREPROC_MIN_TILES`.
    CLIPVISION_PREPROC_MIN_TILES = "clip.vision.preproc_min_tiles", "ClipVision.PREPROC_MIN_TILES", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_preproc_min_tiles`";
    /// gguf-py `Keys.ClipVision.PREPROC_MAX_TILES`.
    CLIPVISION_PREPROC_MAX_TILES = "clip.vision.preproc_max_tiles", "ClipVision.PREPROC_MAX_TILES", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_preproc_max_tiles`";
    /// gguf-py `Keys.ClipVision.PREPROC_IMAGE_SIZE`.
    CLIPVISION_PREPROC_IMAGE_SIZE = "clip.vision.preproc_image_size", "ClipVision.PREPROC_IMAGE_SIZE", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_preproc_image_size`";
    /// gguf-py `Keys.ClipVision.PATCH_SIZE`.
    CLIPVISION_PATCH_SIZE = "clip.vision.patch_size", "ClipVision.PATCH_SIZE", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_patch_size`";
    /// gguf-py `Keys.ClipVision.EMBEDDING_LENGTH`.
    CLIPVISION_EMBEDDING_LENGTH = "clip.vision.embedding_length", "ClipVision.EMBEDDING_LENGTH", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_embedding_length`";
    /// gguf-py `Keys.ClipVision.FEED_FORWARD_LENGTH`.
    CLIPVISION_FEED_FORWARD_LENGTH = "clip.vision.feed_forward_length", "ClipVision.FEED_FORWARD_LENGTH", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_feed_forward_length`";
    /// gguf-py `Keys.ClipVision.PROJECTION_DIM`.
    CLIPVISION_PROJECTION_DIM = "clip.vision.projection_dim", "ClipVision.PROJECTION_DIM", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_projection_dim`";
    /// gguf-py `Keys.ClipVision.BLOCK_COUNT`.
    CLIPVISION_BLOCK_COUNT = "clip.vision.block_count", "ClipVision.BLOCK_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_block_count`";
    /// gguf-py `Keys.ClipVision.IMAGE_MEAN`.
    CLIPVISION_IMAGE_MEAN = "clip.vision.image_mean", "ClipVision.IMAGE_MEAN", ([f32]), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_image_mean`";
    /// gguf-py `Keys.ClipVision.IMAGE_STD`.
    CLIPVISION_IMAGE_STD = "clip.vision.image_std", "ClipVision.IMAGE_STD", ([f32]), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_image_std`";
    /// gguf-py `Keys.ClipVision.SPATIAL_MERGE_SIZE`.
    CLIPVISION_SPATIAL_MERGE_SIZE = "clip.vision.spatial_merge_size", "ClipVision.SPATIAL_MERGE_SIZE", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_spatial_merge_size`";
    /// gguf-py `Keys.ClipVision.USE_GELU`.
    CLIPVISION_USE_GELU = "clip.use_gelu", "ClipVision.USE_GELU", (bool), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_use_gelu`";
    /// gguf-py `Keys.ClipVision.USE_SILU`.
    CLIPVISION_USE_SILU = "clip.use_silu", "ClipVision.USE_SILU", (bool), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_use_silu`";
    /// gguf-py `Keys.ClipVision.N_WA_PATTERN`.
    CLIPVISION_N_WA_PATTERN = "clip.vision.n_wa_pattern", "ClipVision.N_WA_PATTERN", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_n_wa_pattern`";
    /// gguf-py `Keys.ClipVision.WA_LAYER_INDEXES`.
    CLIPVISION_WA_LAYER_INDEXES = "clip.vision.wa_layer_indexes", "ClipVision.WA_LAYER_INDEXES", ([i32]), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_wa_layer_indexes`";
    /// gguf-py `Keys.ClipVision.IS_DEEPSTACK_LAYERS`.
    CLIPVISION_IS_DEEPSTACK_LAYERS = "clip.vision.is_deepstack_layers", "ClipVision.IS_DEEPSTACK_LAYERS", ([bool]), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_is_deepstack_layers`";
    /// gguf-py `Keys.ClipVision.WINDOW_SIZE`.
    CLIPVISION_WINDOW_SIZE = "clip.vision.window_size", "ClipVision.WINDOW_SIZE", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_window_size`";
    /// gguf-py `Keys.ClipVision.Attention.HEAD_COUNT`.
    CLIPVISION_ATTENTION_HEAD_COUNT = "clip.vision.attention.head_count", "ClipVision.Attention.HEAD_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_head_count`";
    /// gguf-py `Keys.ClipVision.Attention.LAYERNORM_EPS`.
    CLIPVISION_ATTENTION_LAYERNORM_EPS = "clip.vision.attention.layer_norm_epsilon", "ClipVision.Attention.LAYERNORM_EPS", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_attention_layernorm_eps`";
    /// gguf-py `Keys.ClipVision.Projector.SCALE_FACTOR`.
    CLIPVISION_PROJECTOR_SCALE_FACTOR = "clip.vision.projector.scale_factor", "ClipVision.Projector.SCALE_FACTOR", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_projector_scale_factor`";
    /// gguf-py `Keys.ClipVision.SAM.BLOCK_COUNT`.
    CLIPVISION_SAM_BLOCK_COUNT = "clip.vision.sam.block_count", "ClipVision.SAM.BLOCK_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_sam_layers_count`";
    /// gguf-py `Keys.ClipVision.SAM.EMBEDDING_LENGTH`.
    CLIPVISION_SAM_EMBEDDING_LENGTH = "clip.vision.sam.embedding_length", "ClipVision.SAM.EMBEDDING_LENGTH", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_sam_embedding_length`";
    /// gguf-py `Keys.ClipVision.SAM.HEAD_COUNT`.
    CLIPVISION_SAM_HEAD_COUNT = "clip.vision.sam.head_count", "ClipVision.SAM.HEAD_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_vision_sam_head_count`";
    /// gguf-py `Keys.ClipAudio.PROJECTOR_TYPE`.
    CLIPAUDIO_PROJECTOR_TYPE = "clip.audio.projector_type", "ClipAudio.PROJECTOR_TYPE", (string), GgufPyWriter, "gguf-py `GGUFWriter.add_clip_audio_projector_type`";
    /// gguf-py `Keys.ClipAudio.NUM_MEL_BINS`.
    CLIPAUDIO_NUM_MEL_BINS = "clip.audio.num_mel_bins", "ClipAudio.NUM_MEL_BINS", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_audio_num_mel_bins`";
    /// gguf-py `Keys.ClipAudio.EMBEDDING_LENGTH`.
    CLIPAUDIO_EMBEDDING_LENGTH = "clip.audio.embedding_length", "ClipAudio.EMBEDDING_LENGTH", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_audio_embedding_length`";
    /// gguf-py `Keys.ClipAudio.FEED_FORWARD_LENGTH`.
    CLIPAUDIO_FEED_FORWARD_LENGTH = "clip.audio.feed_forward_length", "ClipAudio.FEED_FORWARD_LENGTH", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_audio_feed_forward_length`";
    /// gguf-py `Keys.ClipAudio.PROJECTION_DIM`.
    CLIPAUDIO_PROJECTION_DIM = "clip.audio.projection_dim", "ClipAudio.PROJECTION_DIM", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_audio_projection_dim`";
    /// gguf-py `Keys.ClipAudio.BLOCK_COUNT`.
    CLIPAUDIO_BLOCK_COUNT = "clip.audio.block_count", "ClipAudio.BLOCK_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_audio_block_count`";
    /// gguf-py `Keys.ClipAudio.CHUNK_SIZE`.
    CLIPAUDIO_CHUNK_SIZE = "clip.audio.chunk_size", "ClipAudio.CHUNK_SIZE", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_audio_chunk_size`";
    /// gguf-py `Keys.ClipAudio.CONV_KERNEL_SIZE`.
    CLIPAUDIO_CONV_KERNEL_SIZE = "clip.audio.conv_kernel_size", "ClipAudio.CONV_KERNEL_SIZE", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_audio_conv_kernel_size`";
    /// gguf-py `Keys.ClipAudio.MAX_POS_EMB`.
    CLIPAUDIO_MAX_POS_EMB = "clip.audio.max_pos_emb", "ClipAudio.MAX_POS_EMB", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_audio_max_pos_emb`";
    /// gguf-py `Keys.ClipAudio.Attention.HEAD_COUNT`.
    CLIPAUDIO_ATTENTION_HEAD_COUNT = "clip.audio.attention.head_count", "ClipAudio.Attention.HEAD_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_audio_head_count`";
    /// gguf-py `Keys.ClipAudio.Attention.LAYERNORM_EPS`.
    CLIPAUDIO_ATTENTION_LAYERNORM_EPS = "clip.audio.attention.layer_norm_epsilon", "ClipAudio.Attention.LAYERNORM_EPS", (f32), GgufPyWriter, "gguf-py `GGUFWriter.add_audio_attention_layernorm_eps`";
    /// gguf-py `Keys.ClipAudio.Projector.STACK_FACTOR`.
    CLIPAUDIO_PROJECTOR_STACK_FACTOR = "clip.audio.projector.stack_factor", "ClipAudio.Projector.STACK_FACTOR", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_audio_stack_factor`";
    /// gguf-py `Keys.ClipAudio.Projector.WINDOW_SIZE`.
    CLIPAUDIO_PROJECTOR_WINDOW_SIZE = "clip.audio.projector.window_size", "ClipAudio.Projector.WINDOW_SIZE", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_audio_projector_window_size`";
    /// gguf-py `Keys.ClipAudio.Projector.DOWNSAMPLE_RATE`.
    CLIPAUDIO_PROJECTOR_DOWNSAMPLE_RATE = "clip.audio.projector.downsample_rate", "ClipAudio.Projector.DOWNSAMPLE_RATE", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_audio_projector_downsample_rate`";
    /// gguf-py `Keys.ClipAudio.Projector.HEAD_COUNT`.
    CLIPAUDIO_PROJECTOR_HEAD_COUNT = "clip.audio.projector.head_count", "ClipAudio.Projector.HEAD_COUNT", (u32), GgufPyWriter, "gguf-py `GGUFWriter.add_audio_projector_head_count`";
    /// gguf-py `Keys.Diffusion.SHIFT_LOGITS`.
    DIFFUSION_SHIFT_LOGITS = "diffusion.shift_logits", "Diffusion.SHIFT_LOGITS", (bool), GgufPyWriter, "gguf-py `GGUFWriter.add_diffusion_shift_logits`";
    /// gguf-py `Keys.xIELU.ALPHA_P`.
    XIELU_ALPHA_P = "xielu.alpha_p", "xIELU.ALPHA_P", (layer f32), GgufPyWriter, "gguf-py `GGUFWriter.add_xielu_alpha_p`; llama.cpp reads a scalar or one value per layer";
    /// gguf-py `Keys.xIELU.ALPHA_N`.
    XIELU_ALPHA_N = "xielu.alpha_n", "xIELU.ALPHA_N", (layer f32), GgufPyWriter, "gguf-py `GGUFWriter.add_xielu_alpha_n`; llama.cpp reads a scalar or one value per layer";
    /// gguf-py `Keys.xIELU.BETA`.
    XIELU_BETA = "xielu.beta", "xIELU.BETA", (layer f32), GgufPyWriter, "gguf-py `GGUFWriter.add_xielu_beta`; llama.cpp reads a scalar or one value per layer";
    /// gguf-py `Keys.xIELU.EPS`.
    XIELU_EPS = "xielu.eps", "xIELU.EPS", (layer f32), GgufPyWriter, "gguf-py `GGUFWriter.add_xielu_eps`; llama.cpp reads a scalar or one value per layer";
}
