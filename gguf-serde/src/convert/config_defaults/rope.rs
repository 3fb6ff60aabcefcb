//! The RoPE normalisation of [`super`]: `rope_parameters` from `rope_scaling`/`rope_theta` as
//! transformers 5 standardises them (`PreTrainedConfig.standardize_rope_params` and the classes
//! that override it).

use serde_json::{Map, Value as Json};

use super::*;

/// The `layer_types` names among the keys of `rope` (`nested_rope_parameter_keys`).
pub(super) fn nested_keys(c: &Cfg, rope: &Map<String, Json>) -> Vec<String> {
    let labels: Vec<&str> = c
        .attr("layer_types")
        .and_then(Json::as_array)
        .map(|a| a.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    rope.keys().filter(|k| labels.contains(&k.as_str())).cloned().collect()
}

/// The RoPE dictionary a class starts from: `rope_scaling` when truthy, else `rope_parameters`,
/// else `{}`.
fn rope_start(c: &mut Cfg) -> Res<Map<String, Json>> {
    let scaling = c.kwargs.remove("rope_scaling").unwrap_or(Json::Null);
    let v = if truthy(&scaling) { scaling } else { c.attr("rope_parameters").cloned().unwrap_or(Json::Null) };
    match v {
        Json::Null => Ok(Map::new()),
        Json::Object(m) => Ok(m),
        v => raises(format!("rope_parameters {v} is not a dictionary")),
    }
}

fn rope_dict<'m>(rope: &'m mut Map<String, Json>, key: &str) -> Res<Option<&'m mut Map<String, Json>>> {
    match rope.get_mut(key) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Object(m)) => Ok(Some(m)),
        Some(v) => raises(format!("rope_parameters.{key}: {v} is not a dictionary")),
    }
}

/// `RotaryEmbeddingConfigMixin.convert_rope_params_to_dict`, `default_theta` the class's.
pub(super) fn rope_standard(c: &mut Cfg, default_theta: f64) -> Res<()> {
    let mut rope = rope_start(c)?;
    let theta = match c.kwargs.remove("rope_theta") {
        Some(v) => v,
        None => c.attr("rope_theta").cloned().unwrap_or(default_theta.into()),
    };
    let partial = match c.kwargs.remove("partial_rotary_factor") {
        Some(v) => Some(v),
        None => c.attr("partial_rotary_factor").cloned(),
    }
    .filter(|v| !v.is_null());
    let nested = nested_keys(c, &rope);
    let fill = |m: &mut Map<String, Json>| {
        m.entry("rope_theta").or_insert_with(|| theta.clone());
        if let Some(p) = &partial {
            m.entry("partial_rotary_factor").or_insert_with(|| p.clone());
        }
    };
    if nested.is_empty() {
        fill(&mut rope);
    } else {
        for k in &nested {
            if let Some(m) = rope_dict(&mut rope, k)? {
                fill(m);
            }
        }
    }
    c.set("rope_parameters", Json::Object(rope));
    standardize_rope(c)
}

/// `Phi3Config.convert_rope_params_to_dict`.
pub(super) fn rope_phi3(c: &mut Cfg) -> Res<()> {
    let mut rope = rope_start(c)?;
    let theta = c.kwargs.remove("rope_theta").unwrap_or(10000.0.into());
    rope.entry("rope_theta").or_insert(theta);
    let partial = c.kwargs.get("partial_rotary_factor").cloned().unwrap_or(1.0.into());
    rope.entry("partial_rotary_factor").or_insert(partial);
    c.set("rope_parameters", Json::Object(rope));
    standardize_rope(c)?;
    if let Some(Json::Object(rope)) = c.attrs.get_mut("rope_parameters") {
        if matches!(rope.get("rope_type").and_then(Json::as_str), Some("su" | "yarn")) {
            rope.insert("rope_type".into(), "longrope".into());
        }
    }
    Ok(())
}

/// `Gemma3TextConfig.convert_rope_params_to_dict`.
pub(super) fn rope_gemma3_text(c: &mut Cfg) -> Res<()> {
    let scaling = c.kwargs.remove("rope_scaling").unwrap_or(Json::Null);
    let mut rope = match c.attr("rope_parameters").cloned().unwrap_or(Json::Null) {
        Json::Null => {
            let mut m = Map::new();
            m.insert("sliding_attention".into(), serde_json::json!({"rope_type": "default"}));
            m.insert("full_attention".into(), serde_json::json!({"rope_type": "default"}));
            m
        }
        Json::Object(m) => m,
        v => return raises(format!("rope_parameters {v} is not a dictionary")),
    };
    if !scaling.is_null() {
        let Json::Object(s) = scaling else { return raises(format!("rope_scaling {scaling} is not a dictionary")) };
        let Some(full) = rope_dict(&mut rope, "full_attention")? else {
            return raises("rope_scaling given without rope_parameters.full_attention");
        };
        full.extend(s);
    }
    let default = || Json::Object(Map::from_iter([("rope_type".to_owned(), Json::from("default"))]));
    if rope.get("full_attention").is_none_or(Json::is_null) {
        rope.insert("full_attention".into(), default());
    }
    let theta = c.kwargs.remove("rope_theta").unwrap_or(1_000_000.0.into());
    if let Some(full) = rope_dict(&mut rope, "full_attention")? {
        full.entry("rope_theta").or_insert(theta);
    }
    if rope.get("sliding_attention").is_none_or(Json::is_null) {
        rope.insert("sliding_attention".into(), default());
    }
    let local = c.kwargs.remove("rope_local_base_freq").unwrap_or(10000.0.into());
    if let Some(sliding) = rope_dict(&mut rope, "sliding_attention")? {
        sliding.entry("rope_theta").or_insert(local);
    }
    c.set("rope_parameters", Json::Object(rope));
    standardize_rope(c)
}

/// `RotaryEmbeddingConfigMixin.standardize_rope_params`.
pub(super) fn standardize_rope(c: &mut Cfg) -> Res<()> {
    let theta = c.attr("rope_theta").cloned().unwrap_or(Json::Null);
    let partial = c.attr("partial_rotary_factor").cloned().filter(|v| !v.is_null());
    let mut rope = match c.attr("rope_parameters") {
        Some(Json::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    if rope.is_empty() && !truthy(&theta) {
        return Ok(());
    }
    let max_pos = c.attr("max_position_embeddings").cloned();
    let scaled = |m: &Map<String, Json>| {
        matches!(m.get("rope_type").and_then(Json::as_str), Some("llama3" | "yarn" | "longrope"))
    };
    let fill = |m: &mut Map<String, Json>| {
        let t = m.get("type").cloned().unwrap_or("default".into());
        m.entry("rope_type").or_insert(t);
        m.entry("rope_theta").or_insert_with(|| theta.clone());
        if let Some(p) = &partial {
            m.entry("partial_rotary_factor").or_insert_with(|| p.clone());
        }
    };
    let nested = nested_keys(c, &rope);
    if nested.is_empty() {
        fill(&mut rope);
        if scaled(&rope) {
            if let Some(orig) = c.attr("original_max_position_embeddings") {
                rope.insert("original_max_position_embeddings".into(), orig.clone());
            } else {
                let Some(max_pos) = max_pos else { return raises("no max_position_embeddings") };
                rope.entry("original_max_position_embeddings").or_insert(max_pos);
            }
        }
    } else {
        for k in &nested {
            if let Some(m) = rope_dict(&mut rope, k)? {
                fill(m);
                if scaled(m) {
                    let Some(max_pos) = max_pos.clone() else { return raises("no max_position_embeddings") };
                    m.entry("original_max_position_embeddings").or_insert(max_pos);
                }
            }
        }
    }
    c.set("rope_parameters", Json::Object(rope));
    Ok(())
}
