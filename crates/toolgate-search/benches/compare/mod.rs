//! tantivy 0.27 over the same text as toolgate's index, for the comparison columns of the
//! search benchmark (`--features compare`).
//!
//! Each tool is one document with the five fields toolgate scores (the name split into words,
//! the server, the description, the search hint, the schema's property names and
//! descriptions), each tokenized by tantivy's default tokenizer and boosted by toolgate's
//! BM25F field weight. A query is parsed leniently (whatever tantivy's grammar rejects is
//! dropped) into a disjunction over every field, and the best ten are collected by score:
//! what a user who picked tantivy for tool search would run.

use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{Field, Schema, TEXT};
use tantivy::{IndexReader, IndexWriter, TantivyDocument};
use toolgate_catalog::Catalog;
use toolgate_search::Bm25Params;
use toolgate_search::text::split_identifier;

/// A tantivy index in memory, and what its queries need.
pub struct TantivyIndex {
    reader: IndexReader,
    parser: QueryParser,
}

impl TantivyIndex {
    /// Indexes every tool of `catalog` with as many writer threads as there are cores (at most
    /// four), committed and merged as tantivy's default policy merges.
    pub fn build(catalog: &Catalog) -> TantivyIndex {
        let mut builder = Schema::builder();
        let fields: [Field; 5] =
            ["name", "server", "description", "hint", "schema"].map(|f| builder.add_text_field(f, TEXT));
        let index = tantivy::Index::create_in_ram(builder.build());
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get()).min(4);
        let mut writer: IndexWriter =
            index.writer_with_num_threads(threads, threads * 50_000_000).expect("a writer");
        for tool in catalog.tools() {
            let mut doc = TantivyDocument::default();
            doc.add_text(fields[0], split_identifier(tool.name()));
            doc.add_text(fields[1], tool.server());
            doc.add_text(fields[2], tool.description());
            if let Some(hint) = tool.search_hint() {
                doc.add_text(fields[3], hint);
            }
            for word in tool.schema().words() {
                doc.add_text(fields[4], word);
            }
            writer.add_document(doc).expect("a document is added");
        }
        writer.commit().expect("the index commits");
        writer.wait_merging_threads().expect("merges finish");
        let reader = index.reader().expect("a reader");
        let mut parser = QueryParser::for_index(&index, fields.to_vec());
        for (field, weight) in fields.into_iter().zip(Bm25Params::bm25f().weights) {
            parser.set_field_boost(field, weight);
        }
        TantivyIndex { reader, parser }
    }

    /// The number of documents (tools) indexed.
    pub fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// The best `limit` documents for `query`, as (score, document id within its segment).
    pub fn search(&self, query: &str, limit: usize) -> Vec<(f32, u32)> {
        let (query, _dropped) = self.parser.parse_query_lenient(query);
        let searcher = self.reader.searcher();
        let top = searcher.search(&query, &TopDocs::with_limit(limit).order_by_score()).expect("a search");
        top.into_iter().map(|(score, at)| (score, at.doc_id)).collect()
    }
}
