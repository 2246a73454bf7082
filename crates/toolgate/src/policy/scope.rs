//! Policy scopes: a stable key for "what this subject may see of this catalog", so that caches
//! (index, preselection, search results) never hand one subject another's candidates
//! (a cache is keyed by tenant and permissions, never shared across them).

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::hash::Hash;

use sha2::{Digest, Sha256};

use super::Policy;
use crate::catalog::Catalog;

/// SHA-256 of a subject's effective policy and of the catalog's version (every qualified name
/// and definition hash). Two subjects with the same effective rules share a scope; any change
/// to a rule or to a tool definition gives a new one.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Scope([u8; 32]);

impl Scope {
    /// The raw digest.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Display for Scope {
    /// The first 16 hex digits, enough to tell scopes apart in logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in &self.0[..8] {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Scope({self})")
    }
}

impl Policy {
    /// The cache key of this subject's view of `catalog` (pass the full catalog, before
    /// [`Policy::filter`]). The subject's name is not part of it: what decides is the rules.
    pub fn scope(&self, catalog: &Catalog) -> Scope {
        let mut h = Sha256::new();
        h.update(self.canonical().as_bytes());
        h.update(b"\0catalog\0");
        for tool in catalog.tools() {
            h.update(tool.qualified_name().as_bytes());
            h.update(b"\0");
            h.update(tool.server().as_bytes());
            h.update(b"\0");
            h.update(tool.hash().as_bytes());
            h.update([u8::from(tool.always_load()), u8::from(tool.should_defer())]);
        }
        Scope(h.finalize().into())
    }
}

/// A small cache whose entries are keyed by [`Scope`] as well as by the caller's key, keeping
/// at most `capacity` entries (the least recently inserted or read goes first).
///
/// ```
/// use toolgate::policy::{Policy, ScopedCache};
/// use toolgate::Catalog;
///
/// let catalog = Catalog::embedded();
/// let policy = Policy::permissive();
/// let mut cache: ScopedCache<String, usize> = ScopedCache::new(16);
/// let scope = policy.scope(&catalog);
/// let n = *cache.get_or_insert_with(scope, "visible".to_owned(), || policy.filter(&catalog).catalog.len());
/// assert_eq!(n, catalog.len());
/// ```
#[derive(Debug, Clone)]
pub struct ScopedCache<K, V> {
    capacity: usize,
    entries: HashMap<(Scope, K), V>,
    order: VecDeque<(Scope, K)>,
}

impl<K: Clone + Eq + Hash, V> ScopedCache<K, V> {
    /// An empty cache holding at most `capacity` entries (at least one).
    pub fn new(capacity: usize) -> ScopedCache<K, V> {
        ScopedCache { capacity: capacity.max(1), entries: HashMap::new(), order: VecDeque::new() }
    }

    /// The entry for `key` in `scope`, if cached.
    pub fn get(&mut self, scope: Scope, key: &K) -> Option<&V> {
        let k = (scope, key.clone());
        if self.entries.contains_key(&k) {
            self.touch(&k);
        }
        self.entries.get(&k)
    }

    /// The entry for `key` in `scope`, computed by `make` when missing.
    pub fn get_or_insert_with(&mut self, scope: Scope, key: K, make: impl FnOnce() -> V) -> &V {
        let k = (scope, key);
        if self.entries.contains_key(&k) {
            self.touch(&k);
        } else {
            while self.entries.len() >= self.capacity {
                let Some(old) = self.order.pop_front() else { break };
                self.entries.remove(&old);
            }
            self.order.push_back(k.clone());
            self.entries.insert(k.clone(), make());
        }
        &self.entries[&k]
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Drops every entry of `scope` (for example after a catalog rebuild).
    pub fn clear_scope(&mut self, scope: Scope) {
        self.entries.retain(|(s, _), _| *s != scope);
        self.order.retain(|(s, _)| *s != scope);
    }

    fn touch(&mut self, k: &(Scope, K)) {
        if let Some(pos) = self.order.iter().position(|x| x == k) {
            let item = self.order.remove(pos).expect("position is in range");
            self.order.push_back(item);
        }
    }
}
