//! Small formatting helpers shared by the commands.

use serde_json::Value;

/// A score as JSON: rounded to 4 places; `null` for select, exact-name and prefix hits, whose
/// score is infinite.
pub(crate) fn score_json(score: f32) -> Value {
    if score.is_finite() { Value::from(((score as f64) * 10_000.0).round() / 10_000.0) } else { Value::Null }
}
