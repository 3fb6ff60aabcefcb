//! The `@strict` validation of [`super`]: field types, `validate_architecture`,
//! `validate_layer_type`, `validate_rope`, as transformers 5 raises on a configuration.

use serde_json::Value as Json;

use super::*;

/// Whether `v` has the dataclass type `ty` (the `@strict` check).
fn has_type(v: &Json, ty: &str) -> bool {
    if let Some(t) = ty.strip_suffix('?') {
        return v.is_null() || has_type(v, t);
    }
    match ty {
        "any" => true,
        "int" => is_int(v),
        "float" => v.is_f64(),
        "num" => v.is_number(),
        "bool" => v.is_boolean(),
        "str" => v.is_string(),
        "dict" => v.is_object(),
        "list[str]" => v.as_array().is_some_and(|a| a.iter().all(Json::is_string)),
        "list[int]" => v.as_array().is_some_and(|a| a.iter().all(is_int)),
        "int|list[int]" => is_int(v) || has_type(v, "list[int]"),
        _ => false,
    }
}

/// The `@strict` validation: field types, `validate_architecture`, `validate_layer_type`,
/// `validate_rope`.
pub(super) fn validate(c: &Cfg) -> Res<()> {
    for (name, ty, _) in BASE_FIELDS.iter().chain(c.class.fields) {
        let v = c.attr(name).unwrap_or(&Json::Null);
        if !has_type(v, ty) {
            return raises(format!("{name} = {v} is not of type {ty}"));
        }
    }
    if c.class.model_type == "llama" {
        // `initializer_range: float = interval(min=0.0, max=1.0)`
        let r = c.attr("initializer_range").and_then(Json::as_f64).unwrap_or(0.0);
        if !(0.0..=1.0).contains(&r) {
            return raises(format!("initializer_range {r} is outside [0, 1]"));
        }
    }
    if c.class.hidden_divisible {
        let (h, n) = (c.int("hidden_size")?, c.int("num_attention_heads")?);
        if py_mod(h, n)? != 0 {
            return raises(format!("hidden_size {h} is not a multiple of num_attention_heads {n}"));
        }
    }
    for (key, allowed) in [("layer_types", ALLOWED_ATTN_LAYER_TYPES), ("mlp_layer_types", ALLOWED_MLP_LAYER_TYPES)] {
        let Some(layers) = c.attr(key).filter(|v| !v.is_null()) else { break };
        let Some(layers) = layers.as_array() else {
            return Err(NotLoaded::NotModelled(format!("{key} {layers} is not a list")));
        };
        if !layers.iter().all(|t| t.as_str().is_some_and(|t| allowed.contains(&t))) {
            return raises(format!("{key} has an entry outside {allowed:?}"));
        }
        if let Some(n) = c.attr("num_hidden_layers").filter(|v| !v.is_null()) {
            if n.as_u64() != Some(layers.len() as u64) {
                return raises(format!("{key} has {} entries for num_hidden_layers {n}", layers.len()));
            }
        }
    }
    validate_rope(c)
}

/// `RotaryEmbeddingConfigMixin.validate_rope` (the checks that raise) and Phi-3's.
fn validate_rope(c: &Cfg) -> Res<()> {
    let Some(Json::Object(rope)) = c.attr("rope_parameters").filter(|v| truthy(v)) else { return Ok(()) };
    let nested = nested_keys(c, rope);
    let dicts: Vec<(&str, &Json)> = if nested.is_empty() {
        vec![("full_attention", c.attr("rope_parameters").unwrap_or(&Json::Null))]
    } else {
        nested.iter().map(|k| (k.as_str(), &rope[k])).collect()
    };
    let head_dim = c.attr("head_dim").filter(|v| is_int(v)).and_then(Json::as_i64);
    let max_pos = c.attr("max_position_embeddings").and_then(Json::as_f64);
    for (layer, p) in dicts {
        let Json::Object(p) = p else {
            if p.is_null() {
                continue;
            }
            return raises(format!("rope_parameters.{layer} is not a dictionary"));
        };
        let rope_type = p.get("rope_type").or_else(|| p.get("type")).and_then(Json::as_str).unwrap_or("default");
        let required: &[&str] = match rope_type {
            "default" | "axial" => &[],
            "linear" | "dynamic" => &["factor"],
            "yarn" => &["factor", "original_max_position_embeddings"],
            "longrope" => &["short_factor", "long_factor", "original_max_position_embeddings"],
            "llama3" => {
                &["factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor", "rope_theta"]
            }
            "proportional" => &["rope_theta"],
            _ => &[],
        };
        if let Some(k) = required.iter().find(|k| !p.contains_key(**k)) {
            return raises(format!("rope_parameters of type {rope_type} need {k}"));
        }
        let num = |k: &str| p.get(k).and_then(Json::as_f64);
        let bad = match rope_type {
            "yarn" => (num("original_max_position_embeddings").is_none_or(|o| o == 0.0) || max_pos.is_none())
                .then_some("yarn: max_position_embeddings / original_max_position_embeddings is not a number"),
            "longrope" => (!p["short_factor"].is_array() || !p["long_factor"].is_array())
                .then_some("longrope: short_factor and long_factor must be lists"),
            "llama3" => (num("low_freq_factor").is_none()
                || num("high_freq_factor").is_none()
                || num("original_max_position_embeddings").is_none()
                || max_pos.is_none())
            .then_some("llama3: the factors and original_max_position_embeddings must be numbers"),
            _ => None,
        };
        if let Some(msg) = bad {
            return raises(msg);
        }
        let partial = num("partial_rotary_factor").unwrap_or(1.0);
        if let Some(d) = head_dim {
            if d > 4 && d % 2 != 0 && (d as f64 * partial).trunc() as i64 == d {
                return raises(format!("head_dim {d} is odd for a fully rotated head"));
            }
        }
    }
    if c.class.rope == RopeStyle::Phi3 {
        let t = rope.get("rope_type").and_then(Json::as_str);
        if !matches!(t, Some("default" | "longrope")) {
            return raises(format!("Phi-3 rope_type {t:?} is not default or longrope"));
        }
        let partial = rope.get("partial_rotary_factor").and_then(Json::as_f64).unwrap_or(1.0);
        let dims = (floor_div(c.int("hidden_size")?, c.int("num_attention_heads")?)? as f64 * partial).trunc() as i64;
        for k in ["short_factor", "long_factor"] {
            match rope.get(k) {
                None | Some(Json::Null) => {}
                Some(Json::Array(a)) if a.iter().all(Json::is_number) && a.len() as i64 == dims / 2 => {}
                Some(_) => return raises(format!("Phi-3 rope_parameters.{k} must be {} numbers", dims / 2)),
            }
        }
    }
    Ok(())
}
