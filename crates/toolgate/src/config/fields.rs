//! The reader of one TOML table: typed getters whose errors name the file and the dotted key,
//! shared by the library's reader and a [`Host`](super::Host)'s.

use std::collections::BTreeMap;
use std::time::Duration;

use toml::{Table, Value};

use super::error::suggest;
use super::{ConfigError, ConfigErrorKind, Source, child_key};

pub(super) fn table_value<'t>(
    src: &Source<'_>,
    key: &str,
    value: &'t Value,
    expected: &'static str,
) -> Result<&'t Table, ConfigError> {
    value
        .as_table()
        .ok_or_else(|| src.error(key, ConfigErrorKind::WrongType { expected, found: describe(value) }))
}

/// A value for an error message: its type, and the value itself when it is short.
pub(super) fn describe(value: &Value) -> String {
    match value {
        Value::String(s) if s.chars().count() <= 40 => format!("a string ({s:?})"),
        Value::String(_) => "a string".to_owned(),
        Value::Integer(i) => format!("an integer ({i})"),
        Value::Float(x) => format!("a float ({x})"),
        Value::Boolean(b) => format!("a boolean ({b})"),
        Value::Datetime(d) => format!("a date-time ({d})"),
        Value::Array(_) => "an array".to_owned(),
        Value::Table(_) => "a table".to_owned(),
    }
}

/// One table of the file, at a dotted path, with typed getters whose errors name the key.
/// Made with the keys the table may have, so that any other key is an error there.
#[derive(Debug)]
pub struct Fields<'s, 't> {
    src: &'s Source<'s>,
    table: &'t Table,
    path: String,
}

impl<'s, 't> Fields<'s, 't> {
    /// `table`, at the dotted `path` of `src`, after checking that it has only `known` keys.
    pub fn new(
        src: &'s Source<'s>,
        table: &'t Table,
        path: String,
        known: &[&'static str],
    ) -> Result<Fields<'s, 't>, ConfigError> {
        if let Some(name) = table.keys().find(|k| !known.contains(&k.as_str())) {
            let kind = ConfigErrorKind::UnknownKey {
                name: name.clone(),
                suggestion: suggest(name, known),
                known: known.to_vec(),
            };
            return Err(src.error(&child_key(&path, name), kind));
        }
        Ok(Fields { src, table, path })
    }

    /// `table`, at the dotted `path` of `src`, whose keys are names of the file's own (profile
    /// names, say) rather than keys of the format: none is unknown.
    pub fn named(src: &'s Source<'s>, table: &'t Table, path: String) -> Fields<'s, 't> {
        Fields { src, table, path }
    }

    /// The file being read.
    pub fn src(&self) -> &'s Source<'s> {
        self.src
    }

    /// This table's dotted path (`servers.github`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The dotted key of `name` in this table.
    pub fn key(&self, name: &str) -> String {
        child_key(&self.path, name)
    }

    /// Whether the table has `name`.
    pub fn has(&self, name: &str) -> bool {
        self.table.contains_key(name)
    }

    /// The value of `name`, unread.
    pub fn get(&self, name: &str) -> Option<&'t Value> {
        self.table.get(name)
    }

    /// The sub-table `name`, which may have only `known` keys.
    pub fn child(
        &self,
        name: &str,
        expected: &'static str,
        known: &[&'static str],
    ) -> Result<Option<Fields<'s, 't>>, ConfigError> {
        self.table(name, expected)?.map(|t| Fields::new(self.src, t, self.key(name), known)).transpose()
    }

    /// Each sub-table of the table `name` (`[tokens.NAME]`), by name, each of which may have
    /// only `known` keys.
    pub fn children(
        &self,
        name: &str,
        expected: &'static str,
        each: &'static str,
        known: &[&'static str],
    ) -> Result<Vec<(&'t String, Fields<'s, 't>)>, ConfigError> {
        let Some(t) = self.table(name, expected)? else {
            return Ok(Vec::new());
        };
        let path = self.key(name);
        t.iter()
            .map(|(child, value)| {
                let key = child_key(&path, child);
                let table = table_value(self.src, &key, value, each)?;
                Ok((child, Fields::new(self.src, table, key, known)?))
            })
            .collect()
    }

    /// The error that `name` holds `value`, which is not `expected`.
    pub fn wrong(&self, name: &str, expected: &'static str, value: &Value) -> ConfigError {
        self.src.error(&self.key(name), ConfigErrorKind::WrongType { expected, found: describe(value) })
    }

    /// The error that `name` holds `value`, which is out of the `expected` range.
    pub fn out_of_range(&self, name: &str, value: &Value, expected: &'static str) -> ConfigError {
        let value = match value {
            Value::Integer(i) => i.to_string(),
            Value::Float(x) => x.to_string(),
            other => describe(other),
        };
        self.src.error(&self.key(name), ConfigErrorKind::OutOfRange { value, expected })
    }

    /// Fails when any of `keys` is set: they only apply to the transport `needs`.
    pub fn only_with(&self, keys: &'static [&'static str], needs: &'static str) -> Result<(), ConfigError> {
        match keys.iter().find(|k| self.table.contains_key(**k)) {
            Some(name) => Err(self.src.error(&self.key(name), ConfigErrorKind::MisplacedKey { name, needs })),
            None => Ok(()),
        }
    }

    /// The table `name`, unread.
    pub fn table(&self, name: &str, expected: &'static str) -> Result<Option<&'t Table>, ConfigError> {
        self.get(name).map(|v| table_value(self.src, &self.key(name), v, expected)).transpose()
    }

    /// The string `name`.
    pub fn string(&self, name: &str, expected: &'static str) -> Result<Option<&'t str>, ConfigError> {
        self.get(name).map(|v| v.as_str().ok_or_else(|| self.wrong(name, expected, v))).transpose()
    }

    /// A string with `${VAR}` expanded.
    pub fn expanded(&self, name: &str) -> Result<Option<String>, ConfigError> {
        self.string(name, "a string")?.map(|s| self.src.expand(&self.key(name), s)).transpose()
    }

    /// One of `choices`.
    pub fn choice(
        &self,
        name: &str,
        choices: &'static [&'static str],
    ) -> Result<Option<&'t str>, ConfigError> {
        let Some(s) = self.string(name, "a string")? else {
            return Ok(None);
        };
        if !choices.contains(&s) {
            let kind = ConfigErrorKind::InvalidChoice { value: s.to_owned(), choices };
            return Err(self.src.error(&self.key(name), kind));
        }
        Ok(Some(s))
    }

    /// An integer of at least `min`.
    pub fn count(
        &self,
        name: &str,
        min: usize,
        expected: &'static str,
    ) -> Result<Option<usize>, ConfigError> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let Value::Integer(i) = v else {
            return Err(self.wrong(name, expected, v));
        };
        match usize::try_from(*i) {
            Ok(n) if n >= min => Ok(Some(n)),
            _ => Err(self.out_of_range(name, v, expected)),
        }
    }

    /// A whole number of seconds above 0.
    pub fn seconds(&self, name: &str) -> Result<Option<Duration>, ConfigError> {
        let expected = "a whole number of seconds above 0";
        Ok(self.count(name, 1, expected)?.map(|n| Duration::from_secs(n as u64)))
    }

    /// The array of strings `name`, each with its dotted key (`name[2]`).
    pub fn array(
        &self,
        name: &str,
        expected: &'static str,
    ) -> Result<Option<Vec<(String, &'t str)>>, ConfigError> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let items = v.as_array().ok_or_else(|| self.wrong(name, expected, v))?;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let key = format!("{}[{i}]", self.key(name));
            let s = item.as_str().ok_or_else(|| {
                self.src
                    .error(&key, ConfigErrorKind::WrongType { expected: "a string", found: describe(item) })
            })?;
            out.push((key, s));
        }
        Ok(Some(out))
    }

    /// An array of strings with `${VAR}` expanded.
    pub fn expanded_list(&self, name: &str) -> Result<Option<Vec<String>>, ConfigError> {
        let Some(items) = self.array(name, "an array of strings")? else {
            return Ok(None);
        };
        items.into_iter().map(|(key, s)| self.src.expand(&key, s)).collect::<Result<_, _>>().map(Some)
    }

    /// An array of glob patterns.
    pub fn patterns(&self, name: &str) -> Result<Option<Vec<String>>, ConfigError> {
        let Some(items) = self.array(name, "an array of glob patterns, like [\"list_*\"]")? else {
            return Ok(None);
        };
        items.into_iter().map(|(key, s)| self.src.pattern(&key, s)).collect::<Result<_, _>>().map(Some)
    }

    /// A table of strings with `${VAR}` expanded in the values.
    pub fn expanded_map(&self, name: &str) -> Result<Option<BTreeMap<String, String>>, ConfigError> {
        let Some(t) = self.table(name, "a table of strings, like { NAME = \"value\" }")? else {
            return Ok(None);
        };
        let mut out = BTreeMap::new();
        for (k, v) in t {
            let key = child_key(&self.key(name), k);
            let s = v.as_str().ok_or_else(|| {
                self.src.error(&key, ConfigErrorKind::WrongType { expected: "a string", found: describe(v) })
            })?;
            out.insert(k.clone(), self.src.expand(&key, s)?);
        }
        Ok(Some(out))
    }

    /// The boolean `name`.
    pub fn bool(&self, name: &str) -> Result<Option<bool>, ConfigError> {
        self.get(name).map(|v| v.as_bool().ok_or_else(|| self.wrong(name, "true or false", v))).transpose()
    }
}
