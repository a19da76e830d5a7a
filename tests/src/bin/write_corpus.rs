//! Regenerates `vectors/corpus/` from the corpus builders: every valid frame, every malformed
//! frame, `malformed.tsv` and `report.txt`. Files the builders no longer produce are removed.

use nervix_conformance::corpus::{corpus_dir, malformed_frames, valid_frames, write_corpus};
use std::process::ExitCode;

fn main() -> ExitCode {
    let dir = corpus_dir();
    match write_corpus(&dir) {
        Ok(written) => {
            println!(
                "wrote {written} files to vectors/corpus ({} valid frames, {} malformed frames)",
                valid_frames().len(),
                malformed_frames().len()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("could not write vectors/corpus: {e}");
            ExitCode::FAILURE
        }
    }
}
