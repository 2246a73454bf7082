//! How long each step of indexing a catalog file takes, as a gateway starting on it takes
//! them: reading the file into specs, naming and hashing them into a catalog, the lexical
//! index, and the dense index of the compiled-in model. Three rounds, one line each.
//!
//! `cargo run --release -p toolgate-search --features semantic --example phases CATALOG.jsonl`

use std::io::Write;
use std::time::Instant;

use toolgate_catalog::Catalog;
use toolgate_search::semantic::{DenseIndex, StaticModel};
use toolgate_search::{Index, Strategy};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: phases CATALOG.jsonl")?;
    let mut out = std::io::stdout().lock();
    for _ in 0..3 {
        let t = Instant::now();
        let specs = Catalog::builder().path(path.as_ref())?.into_specs()?;
        let read = t.elapsed();
        let t = Instant::now();
        let catalog = specs.into_iter().fold(Catalog::builder(), |b, s| b.shared(s)).build()?;
        let named = t.elapsed();
        let t = Instant::now();
        let lexical = Index::builder().strategy(Strategy::Lexical).build(&catalog);
        let words = t.elapsed();
        let t = Instant::now();
        let dense = DenseIndex::build(&catalog, StaticModel::embedded());
        let vectors = t.elapsed();
        writeln!(
            out,
            "{} tools: read {read:.0?}, catalog {named:.0?}, lexical {words:.0?}, dense {vectors:.0?}",
            catalog.len()
        )?;
        drop((lexical, dense));
    }
    Ok(())
}
